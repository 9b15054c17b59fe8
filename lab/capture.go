package lab

// Capture decodes what a lab port transmits:
//
//  1. Start tcpdump on the port inside the node's namespace, writing pcap
//     to a pipe (-U --immediate-mode, so frames arrive as they are seen).
//     The daemons notice the packet socket and move the port's
//     transmissions to the kernel's packet path, where tcpdump sees them.
//  2. Read the pcap stream; copy every record to the -w file if any.
//  3. Print one line per flow-control frame (PortFC/BFC signal, PFC), and
//     with All one per other frame too.
//  4. Stop on Count, Duration, the caller's context or tcpdump's exit, and
//     kill tcpdump by its pid whatever happened.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
)

// CaptureOptions say what Capture keeps and when it stops.
type CaptureOptions struct {
	// File, if set, receives the capture as a pcap file as well.
	File string
	// Count stops the capture after this many printed frames (0: no
	// limit).
	Count int
	// Duration stops the capture after this long (0: no limit).
	Duration time.Duration
	// All prints a line for every frame. Without it, tcpdump is given a
	// filter that keeps only flow-control frames (EtherType 0x88B5 and
	// 0x8808), so neither the lines nor the file hold data frames, and a
	// busy port costs the capture little.
	All bool
	// OnListening, if set, is called once tcpdump is capturing.
	OnListening func()
	// OnFrame, if set, sees every captured frame with its timestamp (the
	// reader's goroutine; data is valid during the call only).
	OnFrame func(ts time.Time, data []byte)
	// Result, if set, receives tcpdump's own count of what it captured
	// and dropped once it has exited.
	Result *CaptureResult
	// BeforeStop, if set, is called when Duration or the caller's
	// context ends the capture, before tcpdump is stopped; the capture
	// then goes on for Linger, for frames in flight.
	BeforeStop func()
	// Names, if set, name the MACs of the lines (by
	// net.HardwareAddr.String(), as ReadEthers gives a lab's ethers
	// file): "s0.0.p1 > h1.eth0" for "02:20:00:00:00:01 > 02:10:00:00:01:00".
	// A MAC it lacks prints as it is.
	Names map[string]string
}

// CaptureResult is what tcpdump says at its exit: frames it captured,
// those its filter received and those the kernel dropped because its
// buffer was full. Known is false when it did not say (killed).
type CaptureResult struct {
	Captured, Received, DroppedByKernel uint64
	Known                               bool
}

var tcpdumpCountRE = regexp.MustCompile(`(?m)^(\d+) packets? (captured|received by filter|dropped by kernel)$`)

// parse reads tcpdump's closing lines.
func (r *CaptureResult) parse(stderr string) {
	for _, m := range tcpdumpCountRE.FindAllStringSubmatch(stderr, -1) {
		n, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			continue
		}
		switch m[2] {
		case "captured":
			r.Captured, r.Known = n, true
		case "received by filter":
			r.Received = n
		case "dropped by kernel":
			r.DroppedByKernel = n
		}
	}
}

// Validate checks the options.
func (o *CaptureOptions) Validate() error {
	switch {
	case o.Count < 0:
		return fmt.Errorf("capture: count %d < 0", o.Count)
	case o.Duration < 0:
		return fmt.Errorf("capture: duration %v < 0", o.Duration)
	}
	return nil
}

// captureFilter keeps the flow-control frames: PortFC, BFC and ICI signals and
// MAC control (802.1Qbb PFC, 802.3x PAUSE).
//
// The links' timing probes (EtherType 0x88B5, scheme 3: the fidelity
// monitor's) are not flow control: left out unless All.
const captureFilter = "(ether proto 0x88b5 and ether[15] != 3) or ether proto 0x8808"

// captureBufferKiB is tcpdump's kernel buffer (-B): a second of a
// 100 Mb/s port's frames.
const captureBufferKiB = 16 << 10

// killGrace is how long tcpdump gets to exit after SIGTERM before SIGKILL.
const killGrace = 2 * time.Second

// Linger is how long a capture goes on after BeforeStop: a frame written
// before it reaches tcpdump well within this.
const Linger = 200 * time.Millisecond

var portNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,14}$`)

// Capture runs tcpdump on port of node in lab name and writes to out one
// line per flow-control frame the port transmits (see CaptureOptions).
// It returns nil when it stops on Count or Duration, ctx.Err() when ctx
// ends first, and an error with tcpdump's message when tcpdump fails.
func Capture(ctx context.Context, name, node, port string, opts CaptureOptions, out io.Writer) error {
	args, err := tcpdumpArgs(port, &opts)
	if err != nil {
		return err
	}
	cmd, err := Command(name, node, args...)
	if err != nil {
		return err
	}
	return runCapture(ctx, cmd, &opts, out)
}

// captureInterface is Capture on an interface of the calling thread's
// network namespace. tcpdump is started on the calling goroutine, so a
// goroutine locked into a namespace captures there.
func captureInterface(ctx context.Context, ifname string, opts CaptureOptions, out io.Writer) error {
	args, err := tcpdumpArgs(ifname, &opts)
	if err != nil {
		return err
	}
	return runCapture(ctx, exec.Command(args[0], args[1:]...), &opts, out)
}

func tcpdumpArgs(ifname string, opts *CaptureOptions) ([]string, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if !portNameRE.MatchString(ifname) {
		return nil, fmt.Errorf("capture: bad port name %q (a node's ports are eth<j> or p<p>)", ifname)
	}
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		return nil, fmt.Errorf("capture: tcpdump not found (scripts/install-deps.sh installs it): %w", err)
	}
	args := []string{tcpdump, "-i", ifname, "-U", "--immediate-mode", "-B", strconv.Itoa(captureBufferKiB), "-w", "-"}
	if !opts.All {
		args = append(args, captureFilter)
	}
	return args, nil
}

// runCapture starts cmd, a tcpdump writing pcap to its stdout, and reads
// it until one of the stop conditions.
func runCapture(ctx context.Context, cmd *exec.Cmd, opts *CaptureOptions, out io.Writer) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.Duration > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, opts.Duration)
		defer cancelT()
	}

	var file *os.File
	if opts.File != "" {
		f, err := os.Create(opts.File)
		if err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		file = f
	}
	stderr := &tcpdumpStderr{onListening: opts.OnListening}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err == nil {
		// tcpdump yields the CPU to the daemons: a capture of every
		// frame keeps it busy, and a worker thread kept waiting by it
		// would cost the captured port link time.
		_ = lowerPriority(cmd.Process.Pid)
	}
	if err != nil {
		if file != nil {
			file.Close()
			os.Remove(file.Name())
		}
		return fmt.Errorf("capture: start tcpdump: %w", err)
	}

	readDone := make(chan error, 1)
	go func() { readDone <- readCapture(stdout, file, opts, out) }()
	var readErr error
	finished := false
	select {
	case readErr = <-readDone:
		finished = true
	case <-ctx.Done():
		if opts.BeforeStop != nil {
			opts.BeforeStop()
			select {
			case readErr = <-readDone:
				finished = true
			case <-time.After(Linger):
			}
		}
	}

	// Whatever ended the capture, tcpdump goes, by its pid: SIGTERM, and
	// SIGKILL if it lingers. Its exit closes the pipe, which ends the
	// reader; a reader that is done closes the pipe itself, so tcpdump is
	// not left blocked writing to it.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	killer := time.AfterFunc(killGrace, func() { _ = cmd.Process.Kill() })
	if !finished {
		readErr = <-readDone
	}
	stdout.Close()
	waitErr := cmd.Wait()
	killer.Stop()
	if opts.Result != nil {
		*opts.Result = CaptureResult{}
		opts.Result.parse(stderr.String())
	}
	var fileErr error
	if file != nil {
		fileErr = file.Close()
	}

	switch {
	case errors.Is(readErr, errCountReached):
	case ctx.Err() != nil:
		// We stopped tcpdump, so the stream's end is ours.
		if parent.Err() != nil {
			return parent.Err()
		}
	case readErr != nil && !errors.Is(readErr, io.EOF) && !errors.Is(readErr, io.ErrUnexpectedEOF):
		return fmt.Errorf("capture: %w", readErr)
	case waitErr != nil:
		// tcpdump ended on its own: no such interface, no permission.
		if file != nil {
			os.Remove(file.Name())
		}
		return fmt.Errorf("capture: tcpdump failed (%v): %s", waitErr, stderr.String())
	}
	// Otherwise tcpdump exited cleanly by itself: it was interrupted
	// (a Ctrl-C at the terminal reaches it too), so the capture is over.
	if fileErr != nil {
		return fmt.Errorf("capture: %w", fileErr)
	}
	return nil
}

var errCountReached = errors.New("count reached")

// readCapture reads the pcap stream r, copies it to file, and prints
// lines to out. It returns errCountReached after opts.Count lines, or
// the stream's end or error.
func readCapture(r io.Reader, file *os.File, opts *CaptureOptions, out io.Writer) error {
	// Lines go out in blocks, flushed whenever the stream has nothing
	// more for the moment: a write per frame would fall behind a busy
	// port, and tcpdump would drop what its buffer cannot hold.
	in := bufio.NewReaderSize(r, 1<<20)
	lines := bufio.NewWriterSize(out, 64<<10)
	defer lines.Flush()
	pr, err := pcapgo.NewReader(&flushingReader{r: in, w: lines})
	if err != nil {
		return err
	}
	if pr.LinkType() != layers.LinkTypeEthernet {
		return fmt.Errorf("link type %v, want Ethernet", pr.LinkType())
	}
	var fw *pcapgo.Writer
	var fbuf *bufio.Writer
	if file != nil {
		fbuf = bufio.NewWriter(file)
		defer fbuf.Flush()
		fw = pcapgo.NewWriter(fbuf)
		if err := fw.WriteFileHeader(pr.Snaplen(), pr.LinkType()); err != nil {
			return err
		}
	}
	printed := 0
	for {
		data, ci, err := pr.ReadPacketData()
		if err != nil {
			return err
		}
		if fw != nil {
			if err := fw.WritePacket(ci, data); err != nil {
				return err
			}
		}
		if opts.OnFrame != nil {
			opts.OnFrame(ci.Timestamp, data)
		}
		line, ok := describeFrame(data, opts.All, opts.Names)
		if !ok {
			continue
		}
		if _, err := fmt.Fprintf(lines, "%s %s\n", ci.Timestamp.Local().Format("15:04:05.000000"), line); err != nil {
			return err
		}
		if printed++; opts.Count > 0 && printed >= opts.Count {
			return errCountReached
		}
	}
}

// flushingReader reads from r and flushes w before it would wait for
// more input.
type flushingReader struct {
	r *bufio.Reader
	w *bufio.Writer
}

func (f *flushingReader) Read(p []byte) (int, error) {
	if f.r.Buffered() == 0 && f.w.Buffered() > 0 {
		if err := f.w.Flush(); err != nil {
			return 0, err
		}
	}
	return f.r.Read(p)
}

// describeFrame is the line of one captured frame: "SRC > DST what",
// the MACs by names where it has them. ok is false for a frame that is
// not flow control, unless all.
func describeFrame(b []byte, all bool, names map[string]string) (line string, ok bool) {
	if len(b) < header.EthLen {
		if !all {
			return "", false
		}
		return fmt.Sprintf("runt frame, %d bytes", len(b)), true
	}
	eth := header.Ethernet(b)
	prefix := macName(eth.Src(), names) + " > " + macName(eth.Dst(), names) + " "
	switch {
	case signaling.IsSignal(b):
		return prefix + signaling.Describe(b), true
	case signaling.IsMACControl(b):
		return prefix + signaling.DescribeMACControl(b), true
	case !all:
		return "", false
	}
	return prefix + describeOther(b, names), true
}

// macName is mac's name in names, or mac as it prints.
func macName(mac []byte, names map[string]string) string {
	m := net.HardwareAddr(mac).String()
	if n, ok := names[m]; ok {
		return n
	}
	return m
}

// describeOther summarizes a data or other frame in the fabric's terms:
// "vlan pcp=3 vid=0 IPv4 198.18.0.0 > 198.18.0.15 udp 5000 > 4791, 1514 bytes".
func describeOther(b []byte, names map[string]string) string {
	var f header.Frame
	kind := header.Parse(b, &f)
	var s strings.Builder
	if f.Tagged {
		fmt.Fprintf(&s, "vlan pcp=%d vid=%d ", f.PCP, f.VID)
	}
	switch kind {
	case header.KindARP:
		a := header.ARP(b[f.L3:])
		sa, ta := a.SenderIP(), a.TargetIP()
		sip, tip := net.IP(sa[:]), net.IP(ta[:])
		if a.Op() == header.ARPRequest {
			fmt.Fprintf(&s, "ARP who-has %v tell %v", tip, sip)
		} else {
			fmt.Fprintf(&s, "ARP %v is-at %v", sip, macName(a.SenderMAC(), names))
		}
	case header.KindIPv4:
		src, dst := net.IP(f.Src[:]), net.IP(f.Dst[:])
		switch f.Proto {
		case header.ProtoTCP, header.ProtoUDP:
			proto := "tcp"
			if f.Proto == header.ProtoUDP {
				proto = "udp"
			}
			fmt.Fprintf(&s, "IPv4 %v > %v %s %d > %d", src, dst, proto, f.SPort, f.DPort)
		case header.ProtoICMP:
			fmt.Fprintf(&s, "IPv4 %v > %v icmp", src, dst)
			if ip := header.IPv4(b[f.L3:]); !ip.Fragment() && ip.TotalLen() > ip.HeaderLen() {
				switch t := ip[ip.HeaderLen()]; t {
				case 0:
					s.WriteString(" echo reply")
				case 8:
					s.WriteString(" echo request")
				default:
					fmt.Fprintf(&s, " type %d", t)
				}
			}
		default:
			fmt.Fprintf(&s, "IPv4 %v > %v proto %d", src, dst, f.Proto)
		}
		if ecn := header.IPv4(b[f.L3:]).ECN(); ecn == header.ECNCE {
			s.WriteString(" ECN-CE")
		}
	case header.KindMalformed:
		s.WriteString("malformed")
	default:
		et := binary.BigEndian.Uint16(b[12:14])
		if f.Tagged {
			et = binary.BigEndian.Uint16(b[16:18])
		}
		fmt.Fprintf(&s, "EtherType 0x%04x (%v)", et, layers.EthernetType(et))
	}
	fmt.Fprintf(&s, ", %d bytes", len(b))
	return s.String()
}

// tcpdumpStderr keeps what tcpdump says, for errors, and calls
// onListening once it reports that it is capturing.
type tcpdumpStderr struct {
	mu          sync.Mutex
	buf         bytes.Buffer
	onListening func()
	listening   bool
}

func (w *tcpdumpStderr) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.buf.Len() < 64<<10 {
		w.buf.Write(p)
	}
	call := !w.listening && bytes.Contains(w.buf.Bytes(), []byte("listening on "))
	if call {
		w.listening = true
	}
	w.mu.Unlock()
	if call && w.onListening != nil {
		w.onListening()
	}
	return len(p), nil
}

func (w *tcpdumpStderr) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(w.buf.String())
}
