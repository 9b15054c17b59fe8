package lab

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
)

// Emulation health: whether the daemons kept up with the fabric they
// emulate during a run. A lab shares the machine's few cores among all
// its daemons and the kernel's veth work; when they fall behind, links
// run slower than their rate and rings overflow, and the run measures the
// machine, not the fabric. Every report of a run carries a Health, and a
// run whose Health is not Valid is flagged invalid rather than reported
// as a result.
//
// A run is invalid when, between its two samples:
//
//   - a daemon did not answer, died or was replaced;
//   - a kernel XSK ring dropped frames (a daemon did not drain its
//     receive ring, or the kernel refused descriptors): frames the
//     emulator lost without any switch deciding to;
//   - a shaped port lost more than MaxLostShare of the run's time, and
//     more than MinLost: link time the emulated link had, with frames
//     waiting and not paused, that the daemon did not use because it was
//     not scheduled (the shaper makes up for lateness up to its catch-up
//     bound, so only longer gaps count; see queues.Lag). Each port's
//     shaper counts it at the port's own rate, so a lab whose levels or
//     cables differ in rate (Spec.Rates, Spec.Links) is judged port by
//     port against each link's capacity. MinLost keeps a
//     short run (an rperf test of a fraction of a second) from being
//     judged by one scheduling hiccup of a few milliseconds, which no
//     process on a shared machine can rule out; such a loss is a
//     warning;
//   - the links' one-hop RTT (the fidelity monitor's probes) missed the
//     model's by more than MaxRTTError at the median or MaxRTTErrorP99 at
//     p99, and by more than MinRTTError;
//   - a worker skipped more than MaxSkippedShare of the run's time: it
//     was later than its replay reaches (twice its slack), so what the
//     model spreads over that time it stepped at once, as of its reach
//     ago (api.WorkerCounters.SkippedNs). Within the reach a late
//     worker steps its engines as a punctual one would have, so that
//     neither the ports nor the probes see the lateness; beyond it the
//     model's time is compressed, which the probes see only when one
//     of theirs falls in it;
//   - (a workload run, JudgeStartLag) its flows started more than
//     MaxStartLag of the target late at p99.
//
// Late frames, the largest lateness and CPU time are reported for
// context: a daemon that is often late but within the catch-up bound
// still gives its link its full rate.

// DefaultMaxLostShare is the largest share of a run's time a port may
// lose before the run is invalid: 1% of a link's capacity.
const DefaultMaxLostShare = 0.01

// DefaultMinLost is the least link time a port must lose, whatever the
// share, for a run to be invalid: a few scheduler ticks.
const DefaultMinLost = 10 * time.Millisecond

// HealthLimits are the thresholds of a valid run.
type HealthLimits struct {
	// MaxLostShare bounds the link time lost on any one port, as a share
	// of the run's duration (0: DefaultMaxLostShare; negative: no bound).
	MaxLostShare float64 `json:"max_lost_share"`
	// MinLost is the least lost link time that can invalidate a run (0:
	// DefaultMinLost).
	MinLost time.Duration `json:"min_lost_ns"`
	// MaxRingDrops bounds the frames the kernel's XSK rings dropped, all
	// ports together (0: none allowed; negative: no bound).
	MaxRingDrops int64 `json:"max_ring_drops"`
	// MaxRTTError bounds how far the links' median achieved one-hop RTT
	// may be from the model's, as a share of it (0: scale.MaxRTTError;
	// negative: no bound).
	MaxRTTError float64 `json:"max_rtt_error"`
	// MinRTTError is the error that never invalidates a run (0:
	// scale.MinRTTError).
	MinRTTError time.Duration `json:"min_rtt_error_ns"`
	// MaxRTTErrorP99 bounds the error of the links' p99 one-hop RTT the
	// same way (0: scale.MaxRTTErrorP99; negative: no bound).
	MaxRTTErrorP99 float64 `json:"max_rtt_error_p99"`
	// MaxStartLag bounds a workload's flows' p99 start lag, in the
	// target's time (0: scale.MaxStartLag; negative: no bound).
	MaxStartLag time.Duration `json:"max_start_lag_target_ns"`
	// MaxSkippedShare bounds the time of the model a worker skipped, as
	// a share of the run's (0: scale.MaxSkippedShare; negative: no
	// bound).
	MaxSkippedShare float64 `json:"max_skipped_share"`
}

func (l HealthLimits) withDefaults() HealthLimits {
	if l.MaxLostShare == 0 {
		l.MaxLostShare = DefaultMaxLostShare
	}
	if l.MinLost == 0 {
		l.MinLost = DefaultMinLost
	}
	if l.MaxRTTError == 0 {
		l.MaxRTTError = scale.MaxRTTError
	}
	if l.MinRTTError == 0 {
		l.MinRTTError = scale.MinRTTError
	}
	if l.MaxRTTErrorP99 == 0 {
		l.MaxRTTErrorP99 = scale.MaxRTTErrorP99
	}
	if l.MaxStartLag == 0 {
		l.MaxStartLag = scale.MaxStartLag
	}
	if l.MaxSkippedShare == 0 {
		l.MaxSkippedShare = scale.MaxSkippedShare
	}
	return l
}

// HealthSample is what a lab's daemons and the machine said at one
// instant. SampleHealth takes one.
type HealthSample struct {
	At time.Time `json:"at"`
	// CPUs is the number of CPUs the machine offers; Busy and Total its
	// CPU time spent busy and in all since boot (/proc/stat, in clock
	// ticks).
	CPUs  int    `json:"cpus"`
	Busy  uint64 `json:"busy_ticks"`
	Total uint64 `json:"total_ticks"`
	// ModelRTT is the one-hop RTT the lab's model asks of its links (the
	// target's x D), and Judge whether the achieved one is held to it (a
	// native target's links are the emulator's own: reported only).
	ModelRTT time.Duration `json:"model_rtt_ns,omitempty"`
	Judge    bool          `json:"judge_rtt,omitempty"`
	Nodes    []NodeSample  `json:"nodes"`
	// Procs are the processes that host the nodes (workers, or the nodes'
	// own daemons).
	Procs []ProcSample `json:"procs"`
}

// NodeSample is one node in a HealthSample.
type NodeSample struct {
	Node string `json:"node"`
	Pid  int    `json:"pid"`
	// Started identifies the node's instance (when it started, Unix ns):
	// a node stopped and started, or whose daemon restarted, has a new one.
	Started int64 `json:"started_unix_ns,omitempty"`
	// CPU is the node's CPU time since it started: its engine's busy time
	// when it shares a worker, its daemon's user and system time when it
	// has one of its own.
	CPU   time.Duration `json:"cpu_ns"`
	Ports []PortSample  `json:"ports,omitempty"`
	// Err says why the node could not be sampled.
	Err string `json:"error,omitempty"`
	// Worker names the worker that hosts the node ("": a daemon of its
	// own).
	Worker string `json:"worker,omitempty"`
}

// procNotRunning is ProcSample.Err of a process that is not running.
const procNotRunning = "not running"

// ProcSample is one process that hosts nodes: a worker (Name w<i>) or a
// node's own daemon (Name the node's).
type ProcSample struct {
	Name string `json:"name"`
	Pid  int    `json:"pid"`
	// CPU is its user and system time since it started (/proc).
	CPU time.Duration `json:"cpu_ns"`
	// Yields counts the times a worker's engine thread was busy for
	// dataplane.YieldAfter (5 ms) without a sleep (api.WorkerCounters):
	// saturated, it gave up its real-time priority, and every node it
	// runs waited. Not known for a node's own daemon, or a worker that
	// did not answer.
	Yields uint64 `json:"yields,omitempty"`
	// Skipped is the time of the model a worker's engine thread skipped
	// (api.WorkerCounters.SkippedNs): lateness its replay did not
	// absorb. Not known for a node's own daemon.
	Skipped time.Duration `json:"skipped_ns,omitempty"`
	Err     string        `json:"error,omitempty"`
}

// PortSample is one port of a NodeSample.
type PortSample struct {
	Name      string `json:"name"`
	RingDrops uint64 `json:"ring_drops"`
	Late      uint64 `json:"late_frames"`
	MaxLateNs int64  `json:"max_late_ns"`
	LostNs    int64  `json:"lost_ns"`
	// TxFrames is what the port has transmitted: one frame-hop each.
	TxFrames uint64 `json:"tx_frames"`
	// RTT is the one-hop round trips its probes measured (nil: none).
	RTT *api.RTT `json:"rtt,omitempty"`
}

// nodeSample is the part of a NodeSample that a node's stats give.
func nodeSample(st *api.Stats) NodeSample {
	n := NodeSample{Node: st.Node, Pid: st.Pid, Started: st.StartedUnixNs, CPU: time.Duration(st.BusyNs)}
	for i := range st.Ports {
		p := &st.Ports[i]
		n.Ports = append(n.Ports, PortSample{Name: p.Name, RingDrops: p.RingDrops(), Late: p.LateFrames, MaxLateNs: p.MaxLateNs, LostNs: p.LostLinkNs, TxFrames: p.TxPackets, RTT: p.RTT})
	}
	return n
}

// Health is a run's emulation health: what changed between two samples.
type Health struct {
	Valid bool `json:"valid"`
	// Problems says why a run is not Valid, one line each.
	Problems []string `json:"problems,omitempty"`
	// Saturated, when not empty, says which workers were saturated during
	// the run and how often (ProcSample.Yields): why a run that fell
	// behind did, when it was the machine's CPU.
	Saturated string `json:"saturated,omitempty"`
	// Warnings are worth knowing but do not invalidate the run.
	Warnings []string     `json:"warnings,omitempty"`
	Limits   HealthLimits `json:"limits"`

	Wall time.Duration `json:"wall_ns"`
	CPUs int           `json:"cpus"`
	// MachineBusy is the share of all CPUs' time that was busy (every
	// process and the kernel, veth forwarding included); 0 when unknown.
	MachineBusy float64 `json:"machine_busy"`
	// ProcCPU is the CPU time of all the processes that host the
	// lab's nodes (workers or daemons); ProcShare that as a share of
	// all CPUs' time.
	ProcCPU   time.Duration `json:"daemon_cpu_ns"`
	ProcShare float64       `json:"daemon_share"`
	// Busiest are the nodes that used the most CPU, at most five.
	Busiest []NodeCPU `json:"busiest,omitempty"`
	// FrameHops counts the frames every node's ports transmitted (a frame
	// crossing four links counts four). CPUPerHop is the machine's busy
	// CPU time (every process and the kernel) over FrameHops, and
	// ProcPerHop the lab's processes' alone: what one frame-hop costs
	// the emulation, the figure that decides how much rate and how many
	// flows a lab can carry on the machine that runs it. 0 when nothing
	// was sent.
	FrameHops  uint64        `json:"frame_hops"`
	CPUPerHop  time.Duration `json:"cpu_per_hop_ns"`
	ProcPerHop time.Duration `json:"daemon_cpu_per_hop_ns"`

	RingDrops uint64 `json:"ring_drops"`
	// LateFrames counts frames that started later than their link was
	// free; MaxLate is the largest lateness in the run, of the ports
	// whose largest lateness since their daemon started grew during it
	// (the daemons keep only that maximum; a port whose frames were late
	// by less than before does not show).
	LateFrames uint64        `json:"late_frames"`
	MaxLate    time.Duration `json:"max_late_ns"`
	// Lost is the link time lost on the worst port (WorstPort, as
	// node/port), LostShare that as a share of Wall; LostTotal over every
	// port.
	Lost      time.Duration `json:"lost_ns"`
	LostShare float64       `json:"lost_share"`
	WorstPort string        `json:"worst_port,omitempty"`
	LostTotal time.Duration `json:"lost_total_ns"`
	// Skipped is the time of the model the worker that skipped the most
	// (SkippedWorker) skipped (ProcSample.Skipped), SkippedShare that as
	// a share of Wall: how much of the run that worker was later than
	// its replay reaches, when what the model spreads over that time
	// happened at once.
	Skipped       time.Duration `json:"skipped_ns"`
	SkippedShare  float64       `json:"skipped_share"`
	SkippedWorker string        `json:"skipped_worker,omitempty"`
	// Ports lists the ports with ring drops or lost link time.
	Ports []PortHealth `json:"ports,omitempty"`
	// Fidelity is how close the links' achieved one-hop RTT was to the
	// model's (nil: the lab does not probe its links).
	Fidelity *Fidelity `json:"fidelity,omitempty"`
}

// Fidelity is the fidelity monitor's finding over a run: the one-hop
// round trips every fabric port's probes measured (propagation only: a
// probe's own queueing and serialisation do not count), against the
// model's.
type Fidelity struct {
	Model   time.Duration `json:"model_rtt_ns"`
	Samples uint64        `json:"samples"`
	P50     time.Duration `json:"p50_ns"`
	P99     time.Duration `json:"p99_ns"`
	Mean    time.Duration `json:"mean_ns"`
	// Error is (P50 - Model) / Model, ErrorP99 (P99 - Model) / Model: the
	// tail a run's small flows feel, which only Error judges today.
	Error    float64 `json:"error"`
	ErrorP99 float64 `json:"error_p99"`
	// Worst is the port whose median was furthest from the model's, and
	// WorstP50 that median.
	Worst    string        `json:"worst_port,omitempty"`
	WorstP50 time.Duration `json:"worst_p50_ns,omitempty"`
	// RTT is the histogram of every port's samples together.
	RTT api.RTT `json:"rtt"`
}

// minFidelitySamples is the fewest probe round trips a run's fidelity is
// judged on; fewer (a run shorter than a few probe intervals) is a
// warning.
const minFidelitySamples = 20

// NodeCPU is one node's CPU time in a run; Share is of one CPU.
type NodeCPU struct {
	Node  string        `json:"node"`
	CPU   time.Duration `json:"cpu_ns"`
	Share float64       `json:"share"`
}

// PortHealth is what went wrong on one port in a run.
type PortHealth struct {
	Port      string        `json:"port"` // node/port
	RingDrops uint64        `json:"ring_drops,omitempty"`
	Late      uint64        `json:"late_frames,omitempty"`
	Lost      time.Duration `json:"lost_ns,omitempty"`
}

// machineBusyWarn is the machine's busy share above which a report warns
// that the run was CPU-bound.
const machineBusyWarn = 0.95

// Since is the health of the run from before to s, judged by limits.
// A nil before means since the daemons started (every counter from zero;
// the wall time is then the oldest daemon's uptime, which the caller
// passes as uptime).
func (s *HealthSample) Since(before *HealthSample, uptime time.Duration, limits HealthLimits) Health {
	limits = limits.withDefaults()
	h := Health{Limits: limits, CPUs: s.CPUs}
	if before != nil {
		h.Wall = s.At.Sub(before.At)
		if dt := s.Total - before.Total; before.Total > 0 && s.Total > before.Total {
			h.MachineBusy = float64(s.Busy-before.Busy) / float64(dt)
		}
	} else {
		h.Wall = uptime
	}
	var prev map[string]*NodeSample
	if before != nil {
		prev = make(map[string]*NodeSample, len(before.Nodes))
		for i := range before.Nodes {
			prev[before.Nodes[i].Node] = &before.Nodes[i]
		}
	}
	problem := func(format string, args ...any) { h.Problems = append(h.Problems, fmt.Sprintf(format, args...)) }
	// A worker that is not running is one problem, naming its nodes,
	// where its nodes would be one each.
	deadWorkers := map[string]int{} // worker -> pid
	for _, p := range s.Procs {
		if p.Err == procNotRunning {
			deadWorkers[p.Name] = p.Pid
		}
	}
	order := make([]string, len(s.Nodes))
	deadNodes := map[string]map[string]bool{} // worker -> its nodes
	for i, n := range s.Nodes {
		order[i] = n.Node
		if _, dead := deadWorkers[n.Worker]; dead && n.Err != "" {
			if deadNodes[n.Worker] == nil {
				deadNodes[n.Worker] = map[string]bool{}
			}
			deadNodes[n.Worker][n.Node] = true
		}
	}
	for _, p := range s.Procs {
		if set := deadNodes[p.Name]; set != nil {
			h.Problems = append(h.Problems, deadProcess(p.Name, p.Pid, order, set, time.Time{}).Error())
		}
	}
	var cpus []NodeCPU
	var fid *Fidelity
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if deadNodes[n.Worker][n.Node] {
			continue // its worker's problem says so
		}
		if n.Err != "" {
			problem("%s: %s", n.Node, n.Err)
			continue
		}
		var b *NodeSample
		if prev != nil {
			b = prev[n.Node]
			switch {
			case b == nil:
				problem("%s: not in the first sample", n.Node)
				continue
			case b.Err != "":
				problem("%s: %s at the start", n.Node, b.Err)
				continue
			case b.Pid != n.Pid:
				problem("%s: daemon restarted (pid %d, then %d)", n.Node, b.Pid, n.Pid)
				continue
			case b.Started != n.Started:
				problem("%s: node restarted (stopped and started again)", n.Node)
				continue
			}
		}
		cpu := n.CPU
		if b != nil {
			cpu -= b.CPU
		}
		cpus = append(cpus, NodeCPU{Node: n.Node, CPU: cpu, Share: share(cpu, h.Wall)})
		for j := range n.Ports {
			p := n.Ports[j]
			newMax := p.Late > 0 // the port's largest lateness is this run's
			if b != nil {
				if k := slices.IndexFunc(b.Ports, func(q PortSample) bool { return q.Name == p.Name }); k >= 0 {
					q := b.Ports[k]
					p.RingDrops -= q.RingDrops
					p.Late -= q.Late
					p.LostNs -= q.LostNs
					p.TxFrames -= q.TxFrames
					newMax = p.MaxLateNs > q.MaxLateNs
				}
			}
			if rtt := portRTT(p, b); rtt.Count > 0 {
				if fid == nil {
					fid = &Fidelity{Model: s.ModelRTT}
				}
				fid.RTT.Add(rtt)
				if p50 := time.Duration(rtt.Quantile(0.5)); fid.Worst == "" || absDur(p50-s.ModelRTT) > absDur(fid.WorstP50-s.ModelRTT) {
					fid.Worst, fid.WorstP50 = n.Node+"/"+p.Name, p50
				}
			}
			h.RingDrops += p.RingDrops
			h.FrameHops += p.TxFrames
			h.LateFrames += p.Late
			if newMax {
				h.MaxLate = max(h.MaxLate, time.Duration(p.MaxLateNs))
			}
			lost := time.Duration(p.LostNs)
			h.LostTotal += lost
			name := n.Node + "/" + p.Name
			if lost > h.Lost {
				h.Lost, h.WorstPort = lost, name
			}
			if p.RingDrops > 0 || lost > 0 {
				h.Ports = append(h.Ports, PortHealth{Port: name, RingDrops: p.RingDrops, Late: p.Late, Lost: lost})
			}
		}
	}
	if prev != nil {
		for _, b := range before.Nodes {
			if !slices.ContainsFunc(s.Nodes, func(n NodeSample) bool { return n.Node == b.Node }) {
				problem("%s: gone by the end", b.Node)
			}
		}
	}
	for _, p := range s.Procs {
		if p.Err != "" {
			continue // its nodes say so
		}
		cpu, skipped := p.CPU, p.Skipped
		if before != nil {
			k := slices.IndexFunc(before.Procs, func(q ProcSample) bool { return q.Name == p.Name && q.Pid == p.Pid })
			if k < 0 || before.Procs[k].Err != "" {
				continue // restarted: its nodes say so
			}
			cpu -= before.Procs[k].CPU
			skipped -= before.Procs[k].Skipped
		}
		h.ProcCPU += cpu
		if skipped > h.Skipped {
			h.Skipped, h.SkippedWorker = skipped, p.Name
		}
	}
	slices.SortFunc(cpus, func(a, b NodeCPU) int { return cmp.Or(cmp.Compare(b.CPU, a.CPU), strings.Compare(a.Node, b.Node)) })
	h.Busiest = cpus[:min(5, len(cpus))]
	if h.CPUs > 0 {
		h.ProcShare = share(h.ProcCPU, h.Wall*time.Duration(h.CPUs))
	}
	h.LostShare = share(h.Lost, h.Wall)
	if h.FrameHops > 0 {
		if h.MachineBusy > 0 && h.CPUs > 0 {
			busy := time.Duration(h.MachineBusy * float64(h.Wall) * float64(h.CPUs))
			h.CPUPerHop = busy / time.Duration(h.FrameHops)
		}
		h.ProcPerHop = h.ProcCPU / time.Duration(h.FrameHops)
	}
	slices.SortFunc(h.Ports, func(a, b PortHealth) int {
		return cmp.Or(cmp.Compare(b.RingDrops, a.RingDrops), cmp.Compare(b.Lost, a.Lost), strings.Compare(a.Port, b.Port))
	})
	if limits.MaxRingDrops >= 0 && h.RingDrops > uint64(limits.MaxRingDrops) {
		worst := h.Ports[0]
		problem("XSK rings dropped %s (most at %s: %d): a daemon did not drain its rings", units.Count(h.RingDrops, "frame", "frames"), worst.Port, worst.RingDrops)
	}
	switch {
	case limits.MaxLostShare < 0 || h.LostShare <= limits.MaxLostShare:
	case h.Lost <= limits.MinLost:
		h.Warnings = append(h.Warnings, fmt.Sprintf("%s lost %v of the lab's link time, %s of this short run (not more than %v of lab time: a scheduling hiccup)",
			h.WorstPort, h.Lost.Round(time.Microsecond), percent(h.LostShare), limits.MinLost))
	default:
		problem("%s lost %v of the lab's link time, %s of the run (limit %s): its daemon was not scheduled in time",
			h.WorstPort, h.Lost.Round(time.Microsecond), percent(h.LostShare), percent(limits.MaxLostShare))
	}
	h.SkippedShare = share(h.Skipped, h.Wall)
	if limits.MaxSkippedShare >= 0 && h.SkippedShare > limits.MaxSkippedShare {
		problem("worker %s skipped %v of the model's time, %s of the run (limit %s): the worker was later than its replay reaches",
			h.SkippedWorker, h.Skipped.Round(time.Microsecond), percent(h.SkippedShare), percent(limits.MaxSkippedShare))
	}
	h.Saturated = saturation(before, s)
	if fid != nil {
		fid.Samples = fid.RTT.Count
		fid.P50, fid.P99 = time.Duration(fid.RTT.Quantile(0.5)), time.Duration(fid.RTT.Quantile(0.99))
		fid.Mean = time.Duration(fid.RTT.MeanNs())
		if fid.Model > 0 {
			fid.Error = float64(fid.P50-fid.Model) / float64(fid.Model)
			fid.ErrorP99 = float64(fid.P99-fid.Model) / float64(fid.Model)
		}
		h.Fidelity = fid
		switch {
		case !s.Judge || fid.Model <= 0 || limits.MaxRTTError < 0:
		case fid.Samples < minFidelitySamples:
			h.Warnings = append(h.Warnings, fmt.Sprintf("only %d probe round trips: too few to judge the links' fidelity", fid.Samples))
		case math.Abs(fid.Error) > limits.MaxRTTError && absDur(fid.P50-fid.Model) > limits.MinRTTError:
			problem("the links' one-hop RTT was %v of lab time at p50 (p99 %v of lab time) against the model's %v of lab time: %+.1f%% off (limit %s): the emulator did not realise the target's delay",
				roundRTT(fid.P50), roundRTT(fid.P99), roundRTT(fid.Model), 100*fid.Error, percent(limits.MaxRTTError))
		case limits.MaxRTTErrorP99 >= 0 && fid.ErrorP99 > limits.MaxRTTErrorP99 && fid.P99-fid.Model > limits.MinRTTError:
			problem("the links' one-hop RTT was %v of lab time at p99 (p50 %v of lab time) against the model's %v of lab time: %+.0f%% off (limit %s): the emulator did not realise the target's delay",
				roundRTT(fid.P99), roundRTT(fid.P50), roundRTT(fid.Model), 100*fid.ErrorP99, percent(limits.MaxRTTErrorP99))
		}
	}
	if h.MachineBusy > machineBusyWarn {
		h.Warnings = append(h.Warnings, fmt.Sprintf("the machine was %s busy: the run was CPU-bound", percent(h.MachineBusy)))
	}
	h.Valid = len(h.Problems) == 0
	switch {
	case h.Saturated == "":
	case h.Valid:
		h.Warnings = append(h.Warnings, h.Saturated)
	default:
		// Why the run fell behind, after what it missed.
		h.Problems = append(h.Problems, h.Saturated)
	}
	return h
}

// JudgeStartLag judges a workload run's start lag: p99, the p99 of how
// much later than their schedule its flows started, in the target's
// time. Past h's MaxStartLag the run is invalid: it ran another
// schedule than the one it reports.
func (h *Health) JudgeStartLag(p99 time.Duration) {
	if limit := h.Limits.MaxStartLag; limit >= 0 && p99 > limit {
		h.Problems = append(h.Problems, fmt.Sprintf("the flows started %v of the target late at p99 (limit %v): the emulator did not start them on time",
			p99.Round(10*time.Nanosecond), limit))
		h.Valid = false
	}
}

// portRTT is the round trips port p measured since its sample in b (nil:
// since it started).
func portRTT(p PortSample, b *NodeSample) api.RTT {
	if p.RTT == nil {
		return api.RTT{}
	}
	if b != nil {
		if k := slices.IndexFunc(b.Ports, func(q PortSample) bool { return q.Name == p.Name }); k >= 0 && b.Ports[k].RTT != nil {
			return p.RTT.Sub(*b.Ports[k].RTT)
		}
	}
	return *p.RTT
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// roundRTT rounds a round trip for people: to the µs.
func roundRTT(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

func share(part, whole time.Duration) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// saturation says which workers of s yielded their real-time priority
// since before (busy for 5 ms without a sleep), and how often; "" when
// none did or the counts are not known.
func saturation(before, s *HealthSample) string {
	if before == nil {
		return ""
	}
	prev := map[string]uint64{}
	for _, p := range before.Procs {
		prev[p.Name] = p.Yields
	}
	var parts []string
	for _, p := range s.Procs {
		if p.Err != "" || p.Yields <= prev[p.Name] {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", p.Name, units.Count(p.Yields-prev[p.Name], "time", "times")))
	}
	if len(parts) == 0 {
		return ""
	}
	return saturatedSign + " (busy for 5 ms without a sleep, while every node they run waited): " + strings.Join(parts, ", ")
}

// saturatedSign begins Health.Saturated.
const saturatedSign = "saturated workers"

func percent(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case f < 0.001:
		return fmt.Sprintf("%.3f%%", 100*f)
	case f < 0.1:
		return fmt.Sprintf("%.2f%%", 100*f)
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

// micros writes d in microseconds with two decimals.
func micros(d time.Duration) string {
	return fmt.Sprintf("%.2f µs", float64(d)/float64(time.Microsecond))
}

// Short is h on one line: the verdict, the daemons' CPU, ring drops and
// the worst port's lost link time, and the first problem.
func (h *Health) Short() string {
	s := fmt.Sprintf("emulation health %s: daemons %s of %s, %s, link time lost %s at most",
		h.Verdict(), percent(h.ProcShare), units.Count(h.CPUs, "CPU", "CPUs"), units.Count(h.RingDrops, "ring drop", "ring drops"), percent(h.LostShare))
	if h.WorstPort != "" {
		s += " (" + h.WorstPort + ")"
	}
	if len(h.Problems) > 0 {
		s += "; " + h.Problems[0]
		if len(h.Problems) > 1 {
			s += fmt.Sprintf(" (and %d more)", len(h.Problems)-1)
		}
	}
	return s
}

// Verdict is "valid" or "INVALID".
func (h *Health) Verdict() string {
	if h.Valid {
		return "valid"
	}
	return "INVALID"
}

// WriteText writes h for people: the verdict and its reasons, then CPU,
// rings and shapers, one line each.
func (h *Health) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "emulation health: %s", h.Verdict())
	if !h.Valid {
		b.WriteString(" (the daemons did not keep up; the results are not the fabric's)")
	}
	// The emulator's own work: its times are the lab's, not the target's.
	b.WriteString("; times of lab time, the emulator's own\n")
	for _, p := range h.Problems {
		fmt.Fprintf(&b, "  problem: %s\n", p)
	}
	for _, p := range h.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", p)
	}
	fmt.Fprintf(&b, "  cpu: %v wall, %d CPUs", h.Wall.Round(time.Millisecond), h.CPUs)
	if h.MachineBusy > 0 {
		fmt.Fprintf(&b, ", machine %s busy", percent(h.MachineBusy))
	}
	fmt.Fprintf(&b, "; daemons %v (%s of all CPUs)", h.ProcCPU.Round(time.Millisecond), percent(h.ProcShare))
	if len(h.Busiest) > 0 {
		var top []string
		for _, d := range h.Busiest {
			top = append(top, fmt.Sprintf("%s %s", d.Node, percent(d.Share)))
		}
		fmt.Fprintf(&b, "; busiest %s of a CPU", strings.Join(top, ", "))
	}
	b.WriteString("\n")
	if h.FrameHops > 0 {
		fmt.Fprintf(&b, "  cost: %d frame-hops", h.FrameHops)
		if h.CPUPerHop > 0 {
			fmt.Fprintf(&b, ", %s of machine CPU each", micros(h.CPUPerHop))
		}
		fmt.Fprintf(&b, " (%s in the lab's processes)\n", micros(h.ProcPerHop))
	}
	fmt.Fprintf(&b, "  rings: %s dropped\n", units.Count(h.RingDrops, "frame", "frames"))
	if f := h.Fidelity; f != nil {
		fmt.Fprintf(&b, "  links: one-hop RTT p50 %v, p99 %v over %d probes", roundRTT(f.P50), roundRTT(f.P99), f.Samples)
		if f.Model > 0 {
			fmt.Fprintf(&b, ", model %v (%+.1f%% at p50", roundRTT(f.Model), 100*f.Error)
			if h.Limits.MaxRTTError >= 0 {
				fmt.Fprintf(&b, ", limit %s", percent(h.Limits.MaxRTTError))
			}
			fmt.Fprintf(&b, "; %+.1f%% at p99", 100*f.ErrorP99)
			if h.Limits.MaxRTTErrorP99 >= 0 {
				fmt.Fprintf(&b, ", limit %s", percent(h.Limits.MaxRTTErrorP99))
			}
			b.WriteString(")")
		}
		if f.Worst != "" {
			fmt.Fprintf(&b, "; furthest %s p50 %v", f.Worst, roundRTT(f.WorstP50))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  shapers: %s", units.Count(h.LateFrames, "late frame", "late frames"))
	if h.MaxLate > 0 {
		fmt.Fprintf(&b, " (largest lateness %v)", h.MaxLate.Round(time.Microsecond))
	}
	fmt.Fprintf(&b, "; link time lost %v in all", h.LostTotal.Round(time.Microsecond))
	if h.Lost > 0 {
		fmt.Fprintf(&b, ", worst %s %v = %s of the run", h.WorstPort, h.Lost.Round(time.Microsecond), percent(h.LostShare))
	}
	if h.Limits.MaxLostShare >= 0 {
		fmt.Fprintf(&b, " (limit %s)", percent(h.Limits.MaxLostShare))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  workers: skipped %v of the model's time", h.Skipped.Round(time.Microsecond))
	if h.Skipped > 0 {
		fmt.Fprintf(&b, " at most (%s), %s of the run", h.SkippedWorker, percent(h.SkippedShare))
	}
	if h.Limits.MaxSkippedShare >= 0 {
		fmt.Fprintf(&b, " (limit %s)", percent(h.Limits.MaxSkippedShare))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// userHZ is the unit of the CPU times in /proc: USER_HZ, 100 on every
// Linux ABI this runs on.
const userHZ = 100

// parseProcCPU reads a process's user and system time from the contents
// of /proc/<pid>/stat (fields 14 and 15, counted after the command name,
// which may hold spaces and parentheses).
func parseProcCPU(stat []byte) (time.Duration, error) {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks uint64
	for _, v := range f[11:13] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc stat: cpu time %q: %w", v, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// parseMachineCPU reads the busy and total CPU time of all CPUs, in
// ticks, from the contents of /proc/stat: its first line is "cpu user
// nice system idle iowait irq softirq steal guest guest_nice"; idle and
// iowait are not busy, and guest time is already in user time.
func parseMachineCPU(stat []byte) (busy, total uint64, err error) {
	line, _, _ := strings.Cut(string(stat), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: first line %q is not the cpu totals", line)
	}
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %q: %w", v, err)
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}
