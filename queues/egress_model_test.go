package queues

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// model is a plain reference of an egress's visible behaviour.
type model struct {
	hq, capacity int
	now          int64
	pk           [][]Packet
	paused       []bool
	until, since []int64
	pausedNs     []int64
	enq, deq     int
}

func (m *model) setNow(now int64) {
	m.now = now
	for q := range m.pk {
		if m.paused[q] && m.until[q] != 0 && m.until[q] <= now {
			m.pausedNs[q] += m.until[q] - m.since[q]
			m.paused[q] = false
		}
	}
}

func (m *model) resume(q int) {
	if m.paused[q] {
		m.pausedNs[q] += m.now - m.since[q]
		m.paused[q] = false
	}
}

// runOps drives an egress and the model with ops and fails t on any
// difference: a paused queue served, HQ not first, a packet out of order,
// lost or invented, or counters that disagree.
func runOps(t *testing.T, cfg EgressConfig, ops []byte) {
	e := newEgress(t, cfg)
	m := &model{hq: cfg.HQ, capacity: cfg.Capacity}
	n := cfg.Queues
	m.pk = make([][]Packet, n)
	m.paused = make([]bool, n)
	m.until = make([]int64, n)
	m.since = make([]int64, n)
	m.pausedNs = make([]int64, n)
	var now int64
	var seq uint64
	next := func() int {
		if len(ops) == 0 {
			return 0
		}
		b := ops[0]
		ops = ops[1:]
		return int(b)
	}
	for step := 0; len(ops) > 0; step++ {
		switch op := next() % 8; op {
		case 0, 1: // enqueue
			q := next() % n
			p := Packet{Addr: seq, Len: uint32(next() * 7), Meta: uint64(q)}
			seq++
			ok, mark := e.Enqueue(q, p, now)
			if want := len(m.pk[q]) < m.capacity; ok != want {
				t.Fatalf("step %d: enqueue into %d (len %d): ok %v", step, q, len(m.pk[q]), ok)
			}
			if mark && (q == m.hq || !cfg.ECN.On()) {
				t.Fatalf("step %d: mark on queue %d", step, q)
			}
			if ok {
				m.pk[q] = append(m.pk[q], p)
				m.enq++
			}
		case 2, 3: // dequeue
			m.setNow(now)
			p, q, ok := e.Dequeue(now)
			eligible := false
			for i := range n {
				eligible = eligible || len(m.pk[i]) > 0 && !m.paused[i]
			}
			switch {
			case ok != eligible:
				t.Fatalf("step %d: dequeue ok %v, eligible %v", step, ok, eligible)
			case !ok:
			case m.paused[q]:
				t.Fatalf("step %d: paused queue %d served at %d (until %d)", step, q, now, m.until[q])
			case m.hq >= 0 && len(m.pk[m.hq]) > 0 && q != m.hq:
				t.Fatalf("step %d: queue %d served before the HQ", step, q)
			case len(m.pk[q]) == 0 || p != m.pk[q][0]:
				t.Fatalf("step %d: queue %d gave %+v, model %v", step, q, p, m.pk[q])
			default:
				m.pk[q] = m.pk[q][1:]
				m.deq++
			}
		case 4: // pause
			q := next() % n
			var until int64
			if d := next(); d%4 != 0 {
				until = now + int64(d-128)*10
			}
			m.setNow(now)
			e.Pause(q, now, until)
			switch {
			case q == m.hq:
			case until != 0 && until <= now:
				m.resume(q)
			default:
				if !m.paused[q] {
					m.paused[q], m.since[q] = true, now
				}
				m.until[q] = until
			}
		case 5: // resume
			q := next() % n
			m.setNow(now)
			e.Resume(q, now)
			m.resume(q)
		case 6: // time passes
			now += int64(next() * 10)
		case 7:
			m.setNow(now)
			eligible := false
			for i := range n {
				eligible = eligible || len(m.pk[i]) > 0 && !m.paused[i]
			}
			if got := e.Eligible(now); got != eligible {
				t.Fatalf("step %d: eligible %v, want %v", step, got, eligible)
			}
		}
		// Conservation and state, after every step.
		packets, bytes := 0, 0
		var expiry int64 = math.MaxInt64
		for q := range n {
			qb := 0
			for _, p := range m.pk[q] {
				qb += int(p.Len)
			}
			packets += len(m.pk[q])
			bytes += qb
			s := e.Stats(q)
			pausedNs := m.pausedNs[q]
			if m.paused[q] {
				pausedNs += m.now - m.since[q]
				if m.until[q] != 0 && m.until[q] < expiry {
					expiry = m.until[q]
				}
			}
			if e.QueueLen(q) != len(m.pk[q]) || e.QueueBytes(q) != qb || s.Packets != len(m.pk[q]) || s.Bytes != qb ||
				s.Paused != m.paused[q] || e.Paused(q) != m.paused[q] || s.PausedNs != pausedNs {
				t.Fatalf("step %d: queue %d: %d packets %d bytes, paused %v for %d ns; model %d %d %v %d",
					step, q, e.QueueLen(q), e.QueueBytes(q), s.Paused, s.PausedNs, len(m.pk[q]), qb, m.paused[q], pausedNs)
			}
		}
		if e.Len() != packets || e.Bytes() != bytes || m.enq-m.deq != packets {
			t.Fatalf("step %d: len %d bytes %d, model %d %d (%d in, %d out)", step, e.Len(), e.Bytes(), packets, bytes, m.enq, m.deq)
		}
		at, ok := e.NextExpiry()
		if ok != (expiry != math.MaxInt64) || ok && at != expiry {
			t.Fatalf("step %d: next expiry %d %v, model %d", step, at, ok, expiry)
		}
	}
	var in, out uint64
	for q := range n {
		s := e.Stats(q)
		in += s.EnqPackets
		out += s.DeqPackets
	}
	if in != uint64(m.enq) || out != uint64(m.deq) {
		t.Fatalf("stats count %d in, %d out; model %d, %d", in, out, m.enq, m.deq)
	}
}

// configFrom makes a small egress configuration out of three bytes.
func configFrom(a, b, c byte) EgressConfig {
	n := 1 + int(a)%9
	cfg := EgressConfig{Queues: n, HQ: int(b)%(n+1) - 1, Capacity: 1 << (c % 4), Seed: uint64(c)}
	if b&0x80 != 0 {
		cfg.Quantum = make([]int, n)
		for i := range cfg.Quantum {
			cfg.Quantum[i] = 1 + (int(a)*31+i*97)%2000
		}
	}
	if c&0x10 != 0 {
		cfg.ECN = ECNConfig{KminBytes: 100, KmaxBytes: 2000, Pmax: 0.5}
	}
	cfg.Groups = []uint64{uint64(a) * 0x9E37 & allQueues(n)}
	return cfg
}

func TestEgressRandomOps(t *testing.T) {
	for seed := range uint64(64) {
		r := rand.New(rand.NewPCG(seed, 77))
		ops := make([]byte, 20_000)
		for i := range ops {
			ops[i] = byte(r.Uint32())
		}
		cfg := configFrom(ops[0], ops[1], ops[2])
		t.Run(strconv.Itoa(int(seed)), func(t *testing.T) { runOps(t, cfg, ops[3:]) })
	}
}

func FuzzEgress(f *testing.F) {
	f.Add(byte(3), byte(3), byte(2), []byte{0, 0, 10, 0, 1, 20, 4, 1, 200, 2, 0, 0, 7, 6, 50, 2, 5, 1, 3})
	f.Add(byte(8), byte(0x88), byte(0x13), []byte{1, 7, 255, 0, 2, 1, 4, 2, 3, 6, 255, 3, 2, 7, 4, 0, 0, 2})
	f.Fuzz(func(t *testing.T, a, b, c byte, ops []byte) {
		runOps(t, configFrom(a, b, c), ops)
	})
}
