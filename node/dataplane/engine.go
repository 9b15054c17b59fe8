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
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
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

// Arrived is when the frame a Handler is handling arrived in the model
// (TimedIO), if the worker got to it late, or Now: a handler that
// records when something reached the node (a flow's last ACK) takes
// this time. Call it on the engine's goroutine.
func (e *Engine) Arrived() int64 {
	if e.arrived != 0 {
		return e.arrived
	}
	return e.Now()
}

// TimedIO is a PortIO that carries each frame's arrival time in the
// model across its link: a cable in memory between engines of one
// worker, which share its clock (node/patch). The sender puts the low 32
// bits of the time (the engine's clock, ns) in the descriptor's Options
// on transmit, the cable copies them to the receiver's descriptor, and
// the receiver starts what the frame causes (its forwarding, the signals
// and ACKs it makes) from that time rather than from when the worker got
// to it, late or early. The emulator's lateness and earliness in
// delivering a frame are then made up at the next hop instead of adding
// up along the path (engine_tx.go, admit; an early frame's forwarding
// starts at its time in the port's schedule, queues.Shaper.RestartAt).
// A kernel socket carries no such time: Options mean something to it.
type TimedIO interface {
	PortIO
	CarriesTime() bool
}

// HeldIO is a TimedIO whose link delay is served at the receiving end
// (a cable in memory, node/patch): the sender puts a frame on the cable
// as its last bit leaves, stamped with when it arrives in the model, and
// the receiving port leaves it on its receive ring until the sender's
// hold has passed: the stamp less the sender's lead (SetLead), the
// emulator's own latency its probes measured (PortSpec.Delay against
// PortSpec.MaxDelay). A delay line at the sender would hold it instead
// and cost the worker a step of the sender's for every frame of every
// hop, the kick at the end of the hold; held at the receiver, a frame is
// received, forwarded and sent on in one step.
//
// Head is when the first frame waiting is due; ReceiveBy takes the
// frames due by then, in order. Both read times as the low 32 bits of
// the engine's clock (ns), which wrap.
type HeldIO interface {
	TimedIO
	SetLead(ns int64)
	Head() (due uint32, ok bool)
	ReceiveBy(descs []xdp.Desc, by uint32) int
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

// FCTimings gives a port's pause timing to its stats: how its flow
// control's pauses met its thresholds (signaling.FCTiming; t.N = 0: none
// by this port). Like PortCounters it runs on the engine's goroutine and
// must not allocate.
type FCTimings interface {
	FCTiming(port int, t *signaling.FCTiming)
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
	// INT has every port stamp an INT record (HPCC, wire/roce's shim)
	// into each RoCEv2 data frame with a shim as it leaves its egress
	// queue: the time its last bit is on the link, the port's bytes sent
	// with it, the bytes still queued at the port and the port's rate.
	INT bool
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
	wire    *queues.DelayLine // nil for an unshaped port without delay, and a held one
	delayNs int64             // held after the last bit (PortSpec.Delay)
	linkNs  int64             // the model's link delay (PortSpec.MaxDelay): the most delayNs may be
	// timed: the port's I/O carries each frame's arrival time in the
	// model (TimedIO), both ways.
	timed bool
	// held: the port's I/O holds frames at the receiver (HeldIO): the
	// port sends each frame as its last bit leaves, not after its delay
	// line, and takes what it receives once it is due.
	held HeldIO
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
	// INT (Options.INT): the bytes dequeued (a record's counter) and the
	// records stamped.
	intTx             uint32
	intStamped        uint64
	drops             [numDropReasons]uint64
	injectedTx        uint64 // own frames dropped on purpose, never sent (CountInjected)
	maxBytes          int
	kicks, kickErrors uint64
	// waits: how long each frame that left the port's data queues (not
	// the HQ) waited there in the model (Engine.Waits).
	waits queues.DelayHist
}

// Engine runs the datapath of one daemon.
type Engine struct {
	mem       Memory
	frameMask uint64
	ports     []*port
	h         Handler
	opts      Options

	free    []uint64     // frame addresses not in any ring or queue
	touched byte         // receive's loads of the frames' first bytes land here
	passNow atomic.Int64 // the clock of the pass under way, plus 1 (0: none; see Now)
	// arrived is when the frame being handled arrived in the model, 0
	// when it is not known (not a received frame, or not over a timed
	// port): what the frames a handler sends in response start from.
	arrived   int64
	queued    int // frames held in egress queues and delay lines
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
	// burstLeft probes are still to go burstEvery apart (ProbeBurst),
	// before the ports probe every probeEvery again.
	burstLeft  int
	burstEvery int64
	probeBuf   [signaling.FrameLen]byte

	timers []Timer
	// timerNext holds each timer's NextTick as deadline last read it, and
	// timersKnown says it still holds: nothing but a pass changes a timer
	// on the engine's goroutine, and deadline follows every pass, so a
	// step need not ask the timers again (hostd's look through every
	// flow). A control call run outside a step forgets them.
	timerNext   []int64
	timersKnown bool
	source      Source
	counters    PortCounters
	timings     FCTimings // counters', if it gives them

	callMu  sync.Mutex
	calls   []func()
	wd      watchdog
	emitted uint64 // signal frames emitted
	lost    uint64 // signal frames that found no free frame or no room

	snapMu   sync.Mutex   // one Snapshot at a time
	snapWant atomic.Int32 // the snapshot asked for: 0 none, snapFull or snapSample
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
		p.linkNs = max(s.MaxDelay, s.Delay).Nanoseconds()
		if t, ok := s.IO.(TimedIO); ok && t.CarriesTime() {
			p.timed = true
			p.held, _ = s.IO.(HeldIO)
		}
		p.setDelay(p.delayNs)
		if p.held == nil && (s.RateBps > 0 || s.Delay > 0) {
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

// PortName is port i's name (PortSpec.Name).
func (e *Engine) PortName(i int) string { return e.ports[i].spec.Name }

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

// Monotonic converts engine time t to the machine's monotonic clock
// (api.MonotonicNs): the clock a lab's daemons share that a step of the
// wall clock does not move. Call it on the engine goroutine (handlers,
// hooks, Call).
func (e *Engine) Monotonic(t int64) int64 {
	if !e.begun {
		return api.MonotonicNs() - e.Now() + t
	}
	return e.monoBase + t
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
func (e *Engine) AddTimer(t Timer) {
	e.timers = append(e.timers, t)
	e.timerNext = append(e.timerNext, -1)
	e.timersKnown = false
}

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
		e.timersKnown = false
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

// SetPortCounters installs a source of extra per-port counters, and of
// the ports' pause timing if it gives that too (FCTimings: a flow-control
// scheme does). Call before Run.
func (e *Engine) SetPortCounters(c PortCounters) {
	e.counters = c
	e.timings, _ = c.(FCTimings)
}

// Uptime is the time since the engine started on its first worker.
func (e *Engine) Uptime() time.Duration { return time.Since(e.started) }
