package dataplane

// An engine is the datapath of one node. A Worker steps it; one step:
//
//  1. run the node's timers that are due (flow-control refresh, transport
//     timers);
//  2. receive a batch on every port and hand each frame to the Handler,
//     which rewrites it in place and names its egress port and queue (or a
//     drop reason);
//  3. admit it to that queue (the node's shared buffer, the port's cap and
//     the frame pool, less a reserve only control frames may use) or drop
//     it, marking ECN on the way in;
//  4. reclaim transmitted frames and top up every fill ring;
//  5. let the node's source (hostd's flows) queue its frames;
//  6. move frames from each egress — strict HQ, then DRR over the queues
//     that are not paused — through the shaper (and delay line) onto the TX
//     ring, and kick;
//  7. answer control requests (snapshots, calls) and run the watchdog.
//
// Then the engine tells the worker its next deadline: the earliest
// shaper, delay or pause-expiry time of a port with frames waiting, timer
// or watchdog check, or none, so an idle node costs nothing.
//
// Counters are plain fields of the worker's goroutine; readers get copies
// through Snapshot, which the engine answers between steps.

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/config"
	"github.com/bcfab/bcfab/header"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/scale"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/xdp"
)

// PortIO is one port's rings as the engine drives them. *xdp.Socket
// implements it; Pipe gives an in-memory pair for tests without root.
type PortIO interface {
	Receive(descs []xdp.Desc) int
	Transmit(descs []xdp.Desc) int
	Kick() error
	Complete(addrs []uint64) int
	Fill(addrs []uint64) int
	FillFree() int
	TxFree() int
}

// Verdict is a Handler's decision about one frame.
type Verdict struct {
	Port  int // egress port; negative: drop for Drop
	Queue int // queue at that port
	// L3 is the offset of the frame's IPv4 header, for ECN marking; 0
	// when the frame has none.
	L3   int
	Drop DropReason
	// Meta travels with the queued packet (queues.Packet.Meta) to the
	// egress hooks: flow control's ingress charge (signaling.IngressMeta).
	Meta uint64
}

// Handler decides what happens to each received frame. It runs on the
// engine goroutine (its worker's). It may rewrite the frame in place and move its start or
// change its length within the frame's chunk by updating d. A negative
// Port with Drop == DropNone means the handler consumed the frame (a
// flow-control signal): it is released without being counted as a drop.
type Handler interface {
	Handle(in int, d *xdp.Desc, v *Verdict)
}

// BoundHandler is a Handler that needs its engine to reach frame bytes.
type BoundHandler interface {
	Handler
	Bind(*Engine)
}

// Timer is periodic work of a node (flow-control refresh) run on the
// engine goroutine between passes.
type Timer interface {
	// NextTick is the engine time (ns) Tick wants to run at, or -1.
	NextTick() int64
	Tick(now int64)
}

// Source produces frames on the engine goroutine (hostd's traffic
// generator). Produce runs once per pass, before transmit, and returns how
// many frames it queued.
type Source interface {
	Produce(now int64) int
}

// PortCounters adds a port's extra counters (signals) to its stats. It
// runs on the engine's goroutine, and once m holds its names it must not
// allocate.
type PortCounters interface {
	PortCounters(port int, m map[string]uint64)
}

// FrameWriter transmits one frame by copy (PacketTX: the capture path).
type FrameWriter interface {
	WriteFrame(b []byte) error
}

// PortSpec describes one port of an engine.
type PortSpec struct {
	Name string
	IO   PortIO
	// Tap, if set, carries the port's transmissions while SetTapped is on.
	Tap     FrameWriter
	RateBps uint64 // 0: unshaped
	// Delay is how long the port holds a frame after its last bit has
	// been serialised (the link's propagation delay, less what the
	// emulator adds): a frame reaches the peer then, store and forward.
	// An unshaped port holds it for Delay after it leaves the queue.
	Delay time.Duration
	// MAC and PeerMAC are the cable's two ends, this port's and its
	// peer's: with them (and Options.ProbeEvery) the port probes the
	// link's round trip (probe.go).
	MAC, PeerMAC net.HardwareAddr
	// MaxDelay bounds the hold the probes may steer Delay to: the
	// model's whole link delay (0: Delay).
	MaxDelay time.Duration
	// CapBytes caps the bytes queued at this port (0: only the node's
	// shared buffer limits it).
	CapBytes int
	// Queues configures the egress queues; Queues.Queues == 0 gives a
	// single queue.
	Queues queues.EgressConfig
}

// Memory is the frame memory shared by an engine's ports.
type Memory struct {
	Bytes     []byte
	FrameSize int
	NumFrames int
	// RingSize is the size of every fill and TX ring; the engine keeps
	// enough frames back to refill them all.
	RingSize int
}

// Options of an engine.
type Options struct {
	// BufferBytes is the node's shared buffer: the bytes all its egress
	// queues may hold together, as a switch ASIC's buffer is shared by
	// its ports.
	BufferBytes int
	// Watchdog watches for queues stuck paused (zero: off).
	Watchdog config.Watchdog
	// Log receives the watchdog's reports (nil: discarded).
	Log *slog.Logger
	// ProbeEvery is how often every port with a PeerMAC probes its link's
	// round trip (probe.go); 0: never.
	ProbeEvery time.Duration
	// ModelRTT, when set with ProbeEvery, is the one-hop round trip the
	// links are to achieve: every shaped port steers its delay line's hold
	// (between 0 and its PortSpec.MaxDelay) so that the median of its
	// probes' round trips meets it (probe.go, "Steering").
	ModelRTT time.Duration
	// Mark, if set, runs on the worker's thread as it copies the
	// counters for a snapshot, and SnapshotAt returns its value: a
	// patched cable's copier marks its queue there, to tell the capture
	// copies of frames counted before the snapshot from those after. It
	// must not allocate.
	Mark func() uint64
}

const (
	batch = 64
	// shaperBurst is how far ahead of real time a shaped port may run: the
	// time granularity of the emulated links. It bounds wake-ups to about
	// one per 3/4 burst per busy port without changing the average rate.
	// (scale.ShaperBurst says what it changes in target time.)
	shaperBurst = scale.ShaperBurst
	// retryWait is how soon to retry a port whose TX the kernel refused.
	retryWait = 20 * time.Microsecond
	// maxQueueCapacity bounds the frames a port's delay line holds.
	maxQueueCapacity = 4096
	// The reserve for control frames: a share of the frame pool and of
	// the shared buffer (1/16), at most ctlReserveFrames frames and
	// ctlReserveBytes bytes. Control frames are small and leave first
	// (strict HQ), so a little suffices: 256 of them are 1.7 ms of a
	// 100 Mb/s link.
	ctlReserveShare  = 16
	ctlReserveFrames = 256
	ctlReserveBytes  = 64 << 10
)

type port struct {
	spec    PortSpec
	io      PortIO
	egress  *queues.Egress
	shaper  queues.Shaper
	wire    *queues.DelayLine // nil for an unshaped port without delay
	delayNs int64             // held after the last bit (PortSpec.Delay)
	// probe: the port probes its link (PeerMAC set, probing on); rtt is
	// the round trips measured, probeSeq the last probe's number.
	probe    bool
	probeSeq uint32
	rtt      rttHist
	steer    steering
	stalled  bool // the kernel did not take every TX descriptor
	tapped   atomic.Bool
	// idle: the last dequeue found nothing eligible (empty, or every
	// queue with frames paused), so the link has been idle since (or
	// since its last frame ended); the lag accounting does not count the
	// time until a frame becomes eligible again.
	idle bool

	wd     []wdQueue // per queue, with the watchdog on
	wdDrop uint64    // queues whose arrivals the watchdog drops

	// What a step must look at, so that a node with many ports and little
	// traffic costs little: rxReady, the port may have received frames
	// (its worker's poller said so, or its last receive filled a batch);
	// needFill, its fill ring has room the free frames did not fill yet;
	// inflight, frames on its TX ring not completed yet.
	rxReady  bool
	needFill bool
	inflight int
	// receiveAll's turn: frames taken this pass, and whether more may
	// wait.
	rxTaken int
	rxMore  bool

	rxPackets, rxBytes uint64
	// What became of the frames received: handed to an egress queue, or
	// taken by the node (the rest are drops on receive, by reason).
	rxForwarded, rxConsumed uint64
	txPackets, txBytes      uint64
	drops                   [numDropReasons]uint64
	maxBytes                int
	kicks, kickErrors       uint64
}

// Engine runs the datapath of one daemon.
type Engine struct {
	mem       Memory
	frameMask uint64
	ports     []*port
	h         Handler
	opts      Options

	free      []uint64     // frame addresses not in any ring or queue
	touched   byte         // receive's loads of the frames' first bytes land here
	passNow   atomic.Int64 // the clock of the pass under way, plus 1 (0: none; see Now)
	queued    int          // frames held in egress queues and delay lines
	maxQueued int
	buffered  int // bytes in all egress queues (the shared buffer)
	// Data may fill the frame pool and the shared buffer only up to
	// these; the rest is reserved for control frames (see Send).
	dataFrames, dataBytes int

	rx    [batch]xdp.Desc
	tx    [batch]xdp.Desc
	addrs [batch]uint64
	v     Verdict

	// w is the worker that steps the engine (nil: none); epoch is its
	// clock's origin, set when the engine first starts, and started
	// when that was.
	w       *Worker
	own     *Worker // the private worker of Run
	epoch   time.Time
	begun   bool
	started time.Time
	ready   chan struct{}
	running atomic.Bool // on a running worker: Call and Snapshot go through it
	poked   atomic.Bool // a control request waits
	busyNs  int64       // worker time spent in this engine's steps
	rxStart int         // the port receiveAll starts at
	// clock, when set, replaces the time since epoch: tests drive the
	// engine on a fake clock with it.
	clock func() int64
	// monoBase is the machine's monotonic clock at the engine's time 0,
	// set when the engine begins: a probe's send time is monoBase + the
	// engine time.
	monoBase   int64
	probeEvery int64 // ns; 0: no probes
	probing    bool  // StartProbes was called: the ports probe
	modelRTT   int64 // ns; 0: the delay lines are not steered
	nextProbe  int64
	probeBuf   [signaling.FrameLen]byte

	timers   []Timer
	source   Source
	counters PortCounters

	callMu  sync.Mutex
	calls   []func()
	wd      watchdog
	emitted uint64 // signal frames emitted
	lost    uint64 // signal frames that found no free frame or no room

	snapMu   sync.Mutex // one Snapshot at a time
	snapWant atomic.Bool
	snapDone chan struct{}
	snap     rawSnapshot // written by the worker, read under snapMu
}

// NewEngine builds an engine over mem and ports. All frames start free. A
// Worker runs it (Worker.Add), or Run on a worker of its own.
func NewEngine(mem Memory, ports []PortSpec, h Handler, opts Options) (*Engine, error) {
	if mem.FrameSize <= 0 || mem.FrameSize&(mem.FrameSize-1) != 0 {
		return nil, fmt.Errorf("dataplane: frame size %d is not a power of two", mem.FrameSize)
	}
	if len(mem.Bytes) < mem.FrameSize*mem.NumFrames {
		return nil, fmt.Errorf("dataplane: memory of %d bytes holds fewer than %d frames", len(mem.Bytes), mem.NumFrames)
	}
	if opts.BufferBytes <= 0 {
		return nil, fmt.Errorf("dataplane: buffer of %d bytes", opts.BufferBytes)
	}
	e := &Engine{mem: mem, frameMask: ^uint64(mem.FrameSize - 1), h: h, opts: opts,
		ready: make(chan struct{}), snapDone: make(chan struct{}, 1), probeEvery: opts.ProbeEvery.Nanoseconds(),
		modelRTT: opts.ModelRTT.Nanoseconds()}
	e.maxQueued = mem.NumFrames - len(ports)*2*mem.RingSize
	if e.maxQueued < 64 {
		return nil, fmt.Errorf("dataplane: %d frames leave %d for queues after %d ports' rings of %d", mem.NumFrames, e.maxQueued, len(ports), mem.RingSize)
	}
	e.dataFrames = e.maxQueued - min(e.maxQueued/ctlReserveShare, ctlReserveFrames)
	e.dataBytes = opts.BufferBytes - min(opts.BufferBytes/ctlReserveShare, ctlReserveBytes)
	// Every queue of the node takes its packets' slots from one pool, as
	// many as frames may be queued.
	pool, err := queues.NewPool(e.maxQueued)
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	qcap := 1
	for qcap < e.maxQueued && qcap < maxQueueCapacity {
		qcap <<= 1
	}
	for i, s := range ports {
		qc := s.Queues
		if qc.Queues == 0 {
			qc = queues.EgressConfig{Queues: 1, HQ: -1}
		}
		qc.Pool = pool
		eg, err := queues.NewEgress(qc)
		if err != nil {
			return nil, fmt.Errorf("dataplane: port %d (%s): %w", i, s.Name, err)
		}
		p := &port{spec: s, io: s.IO, egress: eg, shaper: queues.NewShaper(s.RateBps, shaperBurst, scale.Catchup(s.RateBps)),
			delayNs: max(0, s.Delay.Nanoseconds()), probe: opts.ProbeEvery > 0 && len(s.PeerMAC) == 6 && len(s.MAC) == 6}
		p.steer.max = max(s.MaxDelay, s.Delay).Nanoseconds()
		if s.RateBps > 0 || s.Delay > 0 {
			if p.wire, err = queues.NewDelayLine(qcap); err != nil {
				return nil, err
			}
		}
		e.ports = append(e.ports, p)
	}
	if err := e.initWatchdog(); err != nil {
		return nil, err
	}
	e.free = make([]uint64, 0, mem.NumFrames)
	for i := mem.NumFrames - 1; i >= 0; i-- {
		e.free = append(e.free, uint64(i*mem.FrameSize))
	}
	return e, nil
}

// Frame returns the bytes of the frame d describes.
func (e *Engine) Frame(d *xdp.Desc) []byte {
	return e.mem.Bytes[d.Addr : d.Addr+uint64(d.Len)]
}

// Chunk returns the whole chunk holding addr and addr's offset in it, so a
// handler can grow a frame into its headroom.
func (e *Engine) Chunk(addr uint64) ([]byte, int) {
	base := addr & e.frameMask
	return e.mem.Bytes[base : base+uint64(e.mem.FrameSize)], int(addr - base)
}

// Egress returns port i's egress, for flow-control logic running on the
// engine goroutine (handlers and hooks).
func (e *Engine) Egress(i int) *queues.Egress { return e.ports[i].egress }

// PortRate is port i's link rate in bit/s (0: unshaped).
func (e *Engine) PortRate(i int) uint64 { return e.ports[i].spec.RateBps }

// Now is the engine's clock in ns: its worker's. During a pass it is the
// pass's clock, read when the pass began and again after it received
// frames, as a polling datapath's clock is per batch: the handlers and
// queues see one time per batch of frames, rather than reading the clock
// for each frame (a vDSO call, 2% of a busy switch's time).
func (e *Engine) Now() int64 {
	if t := e.passNow.Load(); t != 0 {
		return t - 1
	}
	if e.clock != nil {
		return e.clock()
	}
	return int64(time.Since(e.epoch))
}

// SetTapped switches port i's transmissions to its Tap (when it has one)
// so packet captures see them, or back to its TX ring. Safe from any
// goroutine.
func (e *Engine) SetTapped(i int, on bool) {
	p := e.ports[i]
	if p.spec.Tap == nil || p.tapped.Load() == on {
		return
	}
	p.tapped.Store(on)
	e.poke()
}

// poke has the worker step the engine soon (control requests).
func (e *Engine) poke() {
	e.poked.Store(true)
	if w := e.w; w != nil {
		w.poll.k.Wake()
	}
}

// Ready is closed once the engine has given every port its receive
// frames (on its first worker): from then on frames arriving at a port are
// received, not dropped.
func (e *Engine) Ready() <-chan struct{} { return e.ready }

// Run runs the engine on a worker of its own until ctx is done or Stop is
// called.
func (e *Engine) Run(ctx context.Context) error {
	w, err := NewWorker(WorkerOptions{Name: "engine"})
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Add(e); err != nil {
		return err
	}
	e.own = w
	defer w.Remove(e)
	return w.Run(ctx)
}

// Stop asks Run to return.
func (e *Engine) Stop() {
	if w := e.own; w != nil {
		w.Stop()
	}
}

// attach puts the engine on w (the worker's goroutine, or while w does not
// run); it starts once w runs.
func (e *Engine) attach(w *Worker) {
	e.w = w
	e.epoch = w.epoch
	if w.running.Load() {
		e.start()
	}
}

// start makes the engine served by its running worker, on the worker's
// goroutine: the first time, its clock starts and its ports get their
// receive frames (then Ready closes); from now on Call and Snapshot go
// through the worker.
func (e *Engine) start() {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	if !e.begun {
		e.begin()
	}
	e.running.Store(true)
}

// halt marks the engine as not running, then runs the calls that were
// queued for it; later calls run directly.
func (e *Engine) halt() {
	e.callMu.Lock()
	e.running.Store(false)
	calls := e.calls
	e.calls = nil
	e.callMu.Unlock()
	for _, fn := range calls {
		fn()
	}
	e.answerSnapshot()
}

// detach takes the engine off its worker.
func (e *Engine) detach() {
	e.halt()
	e.w = nil
}

// BusyNs is the worker time spent in the engine's steps: its share of its
// worker's CPU, measured around each step.
func (e *Engine) BusyNs() int64 {
	var ns int64
	e.Call(func() { ns = e.busyNs })
	return ns
}

// AddTimer installs t. Call before Run.
func (e *Engine) AddTimer(t Timer) { e.timers = append(e.timers, t) }

// SetSource installs s (nil: none). Call before Run.
func (e *Engine) SetSource(s Source) { e.source = s }

// Call runs fn on the engine goroutine between passes and waits for it
// (directly when the engine is not running). For control-plane requests
// that touch datapath state.
func (e *Engine) Call(fn func()) {
	e.callMu.Lock()
	if !e.running.Load() {
		// Held while fn runs, so a worker cannot start the engine under it.
		defer e.callMu.Unlock()
		fn()
		return
	}
	done := make(chan struct{})
	e.calls = append(e.calls, func() { fn(); close(done) })
	e.callMu.Unlock()
	e.poke()
	<-done
}

func (e *Engine) runCalls() {
	e.callMu.Lock()
	calls := e.calls
	e.calls = nil
	e.callMu.Unlock()
	for _, fn := range calls {
		fn()
	}
}

// SetPortCounters installs a source of extra per-port counters. Call
// before Run.
func (e *Engine) SetPortCounters(c PortCounters) { e.counters = c }

// Emit copies the frame b into a free frame and queues it in port's HQ
// (its only queue if it has none); it reports false when no frame could be
// spared. For flow-control signals built on the engine goroutine.
func (e *Engine) Emit(port int, b []byte) bool {
	addr, ok := e.AllocControl()
	if !ok || len(b) > e.mem.FrameSize {
		if ok {
			e.release(addr)
		}
		e.lost++
		return false
	}
	copy(e.mem.Bytes[addr:], b)
	q := e.ports[port].egress.HQ()
	if q < 0 {
		q = 0
	}
	d := xdp.Desc{Addr: addr, Len: uint32(len(b))}
	if !e.admit(port, q, &d, 0, 0, true) {
		e.lost++ // refused by the buffer: counted there too, by reason
		return false
	}
	e.emitted++
	return true
}

// step is one round of the engine on its worker (see the top of the
// file); it returns how many frames it received, produced or
// transmitted.
func (e *Engine) step(now int64) int {
	if e.probing && now >= e.nextProbe {
		e.sendProbes()
		e.nextProbe = now + e.probeEvery
	}
	for _, t := range e.timers {
		if next := t.NextTick(); next >= 0 && now >= next {
			t.Tick(now)
		}
	}
	moved, now := e.passAt(now)
	if e.poked.Load() {
		e.poked.Store(false)
		t := e.Now()
		e.answerSnapshot()
		e.runCalls()
		if e.w != nil {
			d := e.Now() - t
			e.w.st.controlNs.Add(d)
			if d > e.w.st.maxControlNs.Load() {
				e.w.st.maxControlNs.Store(d)
			}
		}
	}
	// The watchdog measures stalls of a millisecond and more (x D): the
	// pass's clock is recent enough.
	e.watchdog(moved > 0, now)
	return moved
}

// begin starts the clock and gives every port its receive frames.
func (e *Engine) begin() {
	e.begun = true
	if e.epoch.IsZero() {
		e.epoch = time.Now()
	}
	e.started = time.Now()
	e.monoBase = monotonicNs() - e.Now()
	for _, p := range e.ports {
		e.refill(p)
		p.rxReady = true
	}
	close(e.ready)
}

// pass is one round of the loop's stages 1-4; it returns how many frames
// it received or transmitted.
//
// It looks only at the ports that may have work: those the worker's
// poller reported readable (every port when the engine has no worker),
// those with TX frames to complete or fill-ring room to top up, and those
// with frames queued or in the delay line.
// passAt is the engine's receive -> forward -> egress -> transmit pass,
// begun at now; it returns the frames it moved and the clock it
// transmitted by. The clock is read again only if frames were received:
// a pass that received none took far less than a shaper's slack.
func (e *Engine) passAt(now int64) (int, int64) {
	e.passNow.Store(now + 1)
	defer e.passNow.Store(0)
	moved := e.receiveAll()
	for _, p := range e.ports {
		if p.inflight > 0 {
			e.reclaim(p)
		}
		if p.needFill {
			e.refill(p)
		}
	}
	if moved > 0 {
		e.passNow.Store(0)
		now = e.Now()
		e.passNow.Store(now + 1)
	}
	if e.source != nil {
		moved += e.source.Produce(now)
	}
	for _, p := range e.ports {
		if p.egress.Len() > 0 || p.stalled || (p.wire != nil && p.wire.Len() > 0) {
			moved += e.transmit(p, now)
		}
	}
	return moved, now
}

// readable marks port i as maybe holding received frames (its worker's
// poller said so).
func (e *Engine) readable(i int) {
	if i >= 0 && i < len(e.ports) {
		e.ports[i].rxReady = true
	}
}

// readableAll marks every port as maybe holding received frames.
func (e *Engine) readableAll() {
	for _, p := range e.ports {
		p.rxReady = true
	}
}

// receiveAll receives on every port that may have frames, rxChunk frames
// from each port in turn, starting one port further each pass, up to a
// batch per port: what arrived on several ports since the last pass
// reaches the egresses interleaved, as frames arriving side by side on a
// real switch do, and no input port's frames always find the queues
// longer (ECN marks, thresholds) than another's.
func (e *Engine) receiveAll() int {
	all := e.w == nil
	np := len(e.ports)
	e.rxStart++
	if e.rxStart >= np {
		e.rxStart = 0
	}
	moved := 0
	for _, p := range e.ports {
		p.rxTaken = 0
		p.rxMore = all || p.rxReady
	}
	for more := true; more; {
		more = false
		for k := 0; k < np; k++ {
			i := e.rxStart + k
			if i >= np {
				i -= np
			}
			p := e.ports[i]
			if !p.rxMore {
				continue
			}
			want := min(rxChunk, batch-p.rxTaken)
			n := e.receive(i, p, want)
			p.rxTaken += n
			moved += n
			if n > 0 {
				p.needFill = true
			}
			// A full chunk may leave more; a full batch leaves the rest
			// for the next pass.
			p.rxMore = n == want && p.rxTaken < batch
			more = more || p.rxMore
		}
	}
	for _, p := range e.ports {
		p.rxReady = p.rxTaken == batch // more may wait
	}
	return moved
}

// rxChunk is how many frames receiveAll takes from a port in one turn.
const rxChunk = 8

func (e *Engine) receive(in int, p *port, max int) int {
	n := p.io.Receive(e.rx[:max])
	// Touch each frame's first bytes before handling any: the kernel wrote
	// them on another CPU, so each first touch misses the cache, and the
	// misses of independent loads overlap where the handler's, one frame
	// after another, would not.
	var touch byte
	for j := 0; j < n; j++ {
		touch ^= e.mem.Bytes[e.rx[j].Addr]
	}
	e.touched = touch
	v := &e.v
	for j := 0; j < n; j++ {
		d := &e.rx[j]
		p.rxPackets++
		p.rxBytes += uint64(d.Len)
		if signaling.IsProbe(e.mem.Bytes[d.Addr : d.Addr+uint64(d.Len)]) {
			e.probeIn(in, p, d)
			continue
		}
		*v = Verdict{}
		e.h.Handle(in, d, v)
		if v.Port < 0 {
			if v.Drop != DropNone {
				p.drops[v.Drop]++
			} else {
				p.rxConsumed++
			}
			e.release(d.Addr)
			continue
		}
		p.rxForwarded++
		e.Send(v.Port, v.Queue, d, v.L3, v.Meta)
	}
	return n
}

// Send admits the frame d (in this engine's memory) to queue q of port
// out with meta (queues.Packet.Meta), or drops and counts it, and reports
// which; l3 is the offset of its IPv4 header for ECN marking (0: none).
// Sources and flow-control hooks use it for frames they build on the
// engine goroutine.
//
// A frame for a port's HQ is control (ACK, NAK, CNP, flow-control
// signals): it may use the whole frame pool and buffer, while data stops
// short of a reserve, and no port cap applies to it. So control is never
// dropped for lack of buffer when data has filled it: a lossless scheme's
// signals, and the ACKs that end its flows, still get through.
func (e *Engine) Send(out, q int, d *xdp.Desc, l3 int, meta uint64) bool {
	return e.admit(out, q, d, l3, meta, q == e.ports[out].egress.HQ())
}

// AdmitsOwn reports whether a source — a NIC making its own flows'
// frames — may queue a frame of n bytes into queue q of port out now. A
// source asks before it makes one, so that it waits for room rather than
// losing its own packet, and it may fill only half of the node's data
// buffer (bytes and frames): the other half stays for the frames the
// node relays, which, under PortFC, ride a queue that is never paused and
// must not find the buffer taken by the NIC's own flows. (A server's own
// data waits in host memory, not in its NIC's buffer.)
func (e *Engine) AdmitsOwn(out, q, n int) bool {
	p := e.ports[out]
	switch {
	case p.wdDrop&(1<<q) != 0, e.queued >= e.dataFrames/2, e.buffered+n > e.dataBytes/2:
		return false
	case p.spec.CapBytes > 0 && p.egress.Bytes()+n > p.spec.CapBytes:
		return false
	}
	return true
}

// admit is Send; ctl says the frame is control.
func (e *Engine) admit(out, q int, d *xdp.Desc, l3 int, meta uint64, ctl bool) bool {
	p := e.ports[out]
	eg := p.egress
	frames, bytes := e.dataFrames, e.dataBytes
	if ctl {
		frames, bytes = e.maxQueued, e.opts.BufferBytes
	}
	switch {
	case p.wdDrop&(1<<q) != 0:
		eg.CountDrop(q, int(DropWatchdog))
	case e.queued >= frames:
		eg.CountDrop(q, int(DropNoFrames))
	case e.buffered+int(d.Len) > bytes,
		!ctl && p.spec.CapBytes > 0 && eg.Bytes()+int(d.Len) > p.spec.CapBytes:
		eg.CountDrop(q, int(DropBufferFull))
	default:
		now := e.Now()
		if eg.Len() == 0 {
			p.shaper.Restart(now)
		} else if p.idle {
			p.shaper.Quiet(now)
		}
		ok, mark := eg.Enqueue(q, queues.Packet{Addr: d.Addr, Len: d.Len, Meta: meta}, now)
		if !ok {
			eg.CountDrop(q, int(DropBufferFull))
			break
		}
		if mark && l3 > 0 && header.IPv4(e.mem.Bytes[d.Addr+uint64(l3):d.Addr+uint64(d.Len)]).SetCE() {
			eg.CountMark(q)
		}
		e.queued++
		e.buffered += int(d.Len)
		if b := eg.Bytes(); b > p.maxBytes {
			p.maxBytes = b
		}
		return true
	}
	e.release(d.Addr)
	return false
}

// Take removes every frame port's egress would send, as a transmission
// does (hooks, counters, the buffer's accounting), hands each frame's
// queue and bytes to fn and frees the frame. It is for harnesses that
// carry a node's frames themselves instead of an XSK ring (in-process
// tests of a node's logic); it ignores the shaper. Call it on the
// engine's goroutine.
func (e *Engine) Take(port int, fn func(q int, b []byte)) int {
	eg := e.ports[port].egress
	n := 0
	for {
		pk, q, ok := eg.Dequeue(e.Now())
		if !ok {
			return n
		}
		e.queued--
		e.buffered -= int(pk.Len)
		fn(q, e.mem.Bytes[pk.Addr:pk.Addr+uint64(pk.Len)])
		e.release(pk.Addr)
		n++
	}
}

// Alloc takes a free frame for a handler or source to build a data frame
// in; ok is false when none may be spared (the frames left are the
// control reserve).
func (e *Engine) Alloc() (addr uint64, ok bool) { return e.alloc(e.dataFrames) }

// AllocControl takes a free frame for a control frame (one for a port's
// HQ), which may use the control reserve.
func (e *Engine) AllocControl() (addr uint64, ok bool) { return e.alloc(e.maxQueued) }

func (e *Engine) alloc(limit int) (addr uint64, ok bool) {
	if e.queued >= limit || len(e.free) == 0 {
		return 0, false
	}
	addr = e.free[len(e.free)-1]
	e.free = e.free[:len(e.free)-1]
	return addr, true
}

func (e *Engine) release(addr uint64) { e.free = append(e.free, addr&e.frameMask) }

func (e *Engine) reclaim(p *port) {
	for {
		n := p.io.Complete(e.addrs[:])
		for _, a := range e.addrs[:n] {
			e.release(a)
		}
		p.inflight -= n
		if n < batch {
			if p.inflight < 0 {
				p.inflight = 0
			}
			return
		}
	}
}

// refill tops up p's fill ring from the free frames; the port still needs
// filling when there were too few.
func (e *Engine) refill(p *port) {
	room := p.io.FillFree()
	want := min(room, len(e.free))
	p.needFill = want < room
	if want == 0 {
		return
	}
	n := p.io.Fill(e.free[len(e.free)-want:])
	e.free = e.free[:len(e.free)-n]
}

// transmit moves what the shaper and delay line allow onto p's TX ring.
func (e *Engine) transmit(p *port, now int64) int {
	if p.tapped.Load() {
		return e.transmitTapped(p, now)
	}
	total := 0
	for {
		room := p.io.TxFree()
		if room > batch {
			room = batch
		}
		n := 0
		for n < room {
			pk, ok := e.next(p, now)
			if !ok {
				break
			}
			e.tx[n] = xdp.Desc{Addr: pk.Addr, Len: pk.Len}
			p.txPackets++
			p.txBytes += uint64(pk.Len)
			n++
		}
		if n > 0 {
			// TxFree was checked: the ring takes all n.
			p.io.Transmit(e.tx[:n])
			p.inflight += n
			e.queued -= n
			total += n
		}
		if n > 0 || p.stalled {
			if err := p.io.Kick(); err != nil {
				p.kickErrors++
			}
			p.kicks++
			e.reclaim(p)
			p.stalled = p.io.TxFree() < e.mem.RingSize
		}
		if n < batch || p.stalled {
			return total
		}
	}
}

// transmitTapped sends by copy through the port's packet socket, where
// the kernel's taps see it.
func (e *Engine) transmitTapped(p *port, now int64) int {
	n := 0
	for ; n < batch; n++ {
		pk, ok := e.next(p, now)
		if !ok {
			break
		}
		e.queued--
		if err := p.spec.Tap.WriteFrame(e.mem.Bytes[pk.Addr : pk.Addr+uint64(pk.Len)]); err != nil {
			p.drops[DropTxError]++
		} else {
			p.txPackets++
			p.txBytes += uint64(pk.Len)
		}
		e.release(pk.Addr)
	}
	return n
}

// dequeue takes the next frame from p's egress if the shaper lets it go.
func (e *Engine) dequeue(p *port, now int64) (queues.Packet, bool) {
	if !p.shaper.Ready(now) {
		if !p.idle && !p.egress.Eligible(now) {
			// The link is still busy with its last frame, but nothing
			// may follow it (the frames left are paused): it goes idle
			// when that frame ends. The worker may not look at the port
			// again until a pause is lifted, so say so now, or the whole
			// pause would count as link time lost to lateness.
			p.idle = true
		}
		return queues.Packet{}, false
	}
	pk, q, ok := p.egress.Dequeue(now)
	if !ok {
		// Nothing eligible (empty, or every queue with frames paused): the
		// link is idle now and earns no catch-up credit for it.
		p.shaper.Restart(now)
		p.idle = true
		return pk, false
	}
	if p.idle {
		// The link had nothing to send until a frame arrived (Send marks
		// that) or a pause was lifted: time before that is not lost to
		// the daemon's lateness. Only the accounting changes: the shaper
		// lets the port catch up as before.
		p.shaper.Quiet(p.egress.LastLift())
		p.idle = false
	}
	p.shaper.Send(now, int(pk.Len))
	e.buffered -= int(pk.Len)
	if hq := p.egress.HQ(); p.probe && (q == hq || hq < 0) { // probes leave by the HQ (or a port's only queue)
		end := now
		if p.spec.RateBps > 0 {
			end = p.shaper.Free()
		}
		e.stampProbe(&xdp.Desc{Addr: pk.Addr, Len: pk.Len}, end)
	}
	return pk, true
}

// next returns the frame p may put on the TX ring now, if any. A shaped
// port's frames wait in its delay line until their link delivers them:
// the end of their serialisation (the shaper's schedule) plus the delay.
func (e *Engine) next(p *port, now int64) (queues.Packet, bool) {
	if p.wire != nil {
		for !p.wire.Full() {
			pk, ok := e.dequeue(p, now)
			if !ok {
				break
			}
			due := now
			if p.spec.RateBps > 0 {
				due = p.shaper.Free()
			}
			p.wire.Put(due+p.delayNs, pk)
		}
		return p.wire.Take(now)
	}
	return e.dequeue(p, now)
}

// deadline is when the engine next has work without a frame arriving: the
// earliest shaper, delay or pause-expiry deadline of a port with frames
// waiting, a short retry for a port the kernel refused, a timer or the
// watchdog's check; -1 when there is none.
func (e *Engine) deadline(now int64) int64 {
	next := int64(-1)
	consider := func(t int64) {
		if next < 0 || t < next {
			next = t
		}
	}
	for _, p := range e.ports {
		if p.stalled {
			consider(now + int64(retryWait))
		}
		if p.egress.Len() > 0 && (p.wire == nil || !p.wire.Full()) {
			if p.egress.Eligible(now) {
				consider(p.shaper.WakeAt())
			} else if t, ok := p.egress.NextExpiry(); ok {
				consider(t)
			}
		}
		if p.wire != nil {
			if due, ok := p.wire.NextDue(); ok {
				consider(due)
			}
		}
	}
	for _, t := range e.timers {
		if next := t.NextTick(); next >= 0 {
			consider(next)
		}
	}
	if e.wd.next >= 0 {
		consider(e.wd.next)
	}
	if e.probing {
		consider(e.nextProbe)
	}
	return next
}

// Snapshot returns a copy of every port's counters and of the frame pool.
// While the engine runs, its worker copies the raw counters between steps
// into a buffer the engine keeps (allocating nothing on the worker's
// thread, whose every node would wait for it) and this goroutine builds
// the stats from it; otherwise it reads them directly. It returns nil
// ports if a running engine does not answer within two seconds.
func (e *Engine) Snapshot() ([]api.PortStats, api.FrameStats) {
	ps, fs, _, _ := e.SnapshotAt()
	return ps, fs
}

// SnapshotAt is Snapshot, with the wall-clock time (Unix ns) at which the
// counters were copied: a running engine's worker copies them between two
// steps, so every frame its ports sent or received before that instant is
// counted and none after (a capture's frames can be matched against the
// counters by their timestamps). mark is what Options.Mark returned at
// that instant (0: none, or the engine was not running).
func (e *Engine) SnapshotAt() (ps []api.PortStats, fs api.FrameStats, at int64, mark uint64) {
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	select {
	case <-e.snapDone: // the late answer to a request that timed out
	default:
	}
	// Under callMu, as halt stops the engine: a request made while it
	// runs is answered, by the worker or by halt.
	e.callMu.Lock()
	if !e.running.Load() {
		e.takeSnapshot()
		e.callMu.Unlock()
		ps, fs := e.buildStats()
		return ps, fs, e.wallNs(e.snap.now), 0
	}
	e.snapWant.Store(true)
	e.callMu.Unlock()
	e.poke()
	select {
	case <-e.snapDone:
		// The worker wrote e.snap and will not again until the next
		// request, which needs snapMu.
		ps, fs := e.buildStats()
		return ps, fs, e.wallNs(e.snap.now), e.snap.mark
	case <-time.After(2 * time.Second):
		return nil, api.FrameStats{}, 0, 0
	}
}

// wallNs turns a time of the engine's clock into Unix ns (0 under a
// test's clock, which has no wall time).
func (e *Engine) wallNs(now int64) int64 {
	if e.clock != nil || e.epoch.IsZero() {
		return 0
	}
	return e.epoch.Add(time.Duration(now)).UnixNano()
}

func (e *Engine) answerSnapshot() {
	if e.snapWant.Load() {
		e.snapWant.Store(false)
		e.takeSnapshot()
		e.snap.mark = 0
		if e.opts.Mark != nil {
			e.snap.mark = e.opts.Mark()
		}
		e.snapDone <- struct{}{}
	}
}

// rawSnapshot is a copy of an engine's counters, taken on its worker's
// thread without allocating.
type rawSnapshot struct {
	now   int64
	free  int
	mark  uint64 // Options.Mark's
	ports []rawPort
}

type rawPort struct {
	rxPackets, rxBytes, txPackets, txBytes uint64
	rxForwarded, rxConsumed                uint64
	queueBytes, queuePackets, maxBytes     int
	captured                               bool
	drops                                  [numDropReasons]uint64
	lag                                    queues.Lag
	queues                                 []queues.QueueStats
	stalls                                 []api.QueueStats // the watchdog's fields only
	signals                                map[string]uint64
	rtt                                    rttHist
	delay                                  int64
}

// takeSnapshot copies the counters into e.snap (the engine's goroutine,
// or while the engine does not run). After the first it allocates
// nothing.
func (e *Engine) takeSnapshot() {
	sn := &e.snap
	sn.now, sn.free = e.Now(), len(e.free)
	if sn.ports == nil {
		sn.ports = make([]rawPort, len(e.ports))
		for i, p := range e.ports {
			n := p.egress.Queues()
			sn.ports[i] = rawPort{queues: make([]queues.QueueStats, n), stalls: make([]api.QueueStats, n),
				signals: map[string]uint64{}}
		}
	}
	for i, p := range e.ports {
		r := &sn.ports[i]
		eg := p.egress
		r.rxPackets, r.rxBytes, r.txPackets, r.txBytes = p.rxPackets, p.rxBytes, p.txPackets, p.txBytes
		r.rxForwarded, r.rxConsumed = p.rxForwarded, p.rxConsumed
		r.queueBytes, r.queuePackets, r.maxBytes = eg.Bytes(), eg.Len(), p.maxBytes
		r.captured = p.tapped.Load()
		r.drops = p.drops
		r.lag = p.shaper.Lag()
		if p.probe {
			r.rtt = p.rtt
		}
		r.delay = p.delayNs
		for q := range r.queues {
			r.queues[q] = eg.Stats(q)
			r.stalls[q] = api.QueueStats{}
			e.stallStats(p, q, sn.now, &r.stalls[q])
		}
		if e.counters != nil {
			e.counters.PortCounters(i, r.signals)
		}
	}
}

// buildStats turns e.snap into stats (the caller's goroutine).
func (e *Engine) buildStats() ([]api.PortStats, api.FrameStats) {
	sn := &e.snap
	out := make([]api.PortStats, len(e.ports))
	for i, p := range e.ports {
		r := &sn.ports[i]
		eg := p.egress
		ps := api.PortStats{
			Name:          p.spec.Name,
			RateBps:       p.spec.RateBps,
			RxPackets:     r.rxPackets,
			RxBytes:       r.rxBytes,
			RxForwarded:   r.rxForwarded,
			RxConsumed:    r.rxConsumed,
			TxPackets:     r.txPackets,
			TxBytes:       r.txBytes,
			QueueBytes:    uint64(r.queueBytes),
			QueuePackets:  uint64(r.queuePackets),
			MaxQueueBytes: uint64(r.maxBytes),
			Captured:      r.captured,
			Drops:         dropMap(r.drops[:]),
			LateFrames:    r.lag.LateFrames,
			MaxLateNs:     r.lag.MaxNs,
			LostLinkNs:    r.lag.LostNs,
			RTT:           r.rtt.export(),
			LinkDelayNs:   r.delay,
		}
		if len(r.signals) > 0 {
			ps.Signals = maps.Clone(r.signals)
		}
		for q := range r.queues {
			s := &r.queues[q]
			qd := s.Drops[:numDropReasons]
			st := r.stalls[q]
			st.Index, st.Name = q, eg.Name(q)
			st.EnqPackets, st.EnqBytes, st.DeqPackets, st.DeqBytes = s.EnqPackets, s.EnqBytes, s.DeqPackets, s.DeqBytes
			st.Packets, st.Bytes, st.MaxBytes = s.Packets, s.Bytes, s.MaxBytes
			st.Paused, st.PausedNs, st.MaxPauseNs, st.ECNMarks = s.Paused, s.PausedNs, s.MaxPauseNs, s.ECNMarks
			st.Drops, st.IgnoredPauses = dropMap(qd), s.IgnoredPauses
			ps.Queues = append(ps.Queues, st)
			for r, v := range qd {
				ps.Drops[DropReason(r).String()] += v
			}
		}
		out[i] = ps
	}
	return out, api.FrameStats{Total: e.mem.NumFrames, Free: sn.free, Size: e.mem.FrameSize}
}

func dropMap(counts []uint64) map[string]uint64 {
	m := make(map[string]uint64, numDropReasons-1)
	for r := DropReason(1); r < numDropReasons; r++ {
		m[r.String()] = counts[r]
	}
	return m
}

// Uptime is the time since the engine started on its first worker.
func (e *Engine) Uptime() time.Duration { return time.Since(e.started) }

// SignalReceiver is a node's flow control as it takes PortFC and BFC
// signal frames: OnSignal reports false when it takes none.
type SignalReceiver interface {
	OnSignal(in int, sig signaling.Signal) bool
}

// ConsumeSignal settles v for a flow-control frame b that arrived on port
// in: parsed and handed to r (consumed), or dropped as malformed, or as
// unsupported when the node's flow control takes no such frame.
func ConsumeSignal(in int, b []byte, r SignalReceiver, v *Verdict) {
	v.Port = -1
	sig, err := signaling.ParseSignal(b)
	switch {
	case err != nil:
		v.Drop = DropMalformed
	case !r.OnSignal(in, sig):
		v.Drop = DropUnsupported
	}
}

// PFCReceiver is a node's flow control as it takes 802.1Qbb frames:
// OnPFC reports false when it takes none.
type PFCReceiver interface {
	OnPFC(in int, f signaling.PFCFrame) bool
}

// ConsumePFC settles v for a MAC control frame b that arrived on port in:
// an 802.1Qbb frame is handed to r (consumed); a malformed one, or any
// when the node's flow control takes none, is dropped and counted.
func ConsumePFC(in int, b []byte, r PFCReceiver, v *Verdict) {
	v.Port = -1
	f, err := signaling.ParsePFC(b)
	switch {
	case err != nil:
		v.Drop = DropMalformed
	case !r.OnPFC(in, f):
		v.Drop = DropUnsupported
	}
}
