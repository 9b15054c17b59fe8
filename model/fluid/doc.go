// Package fluid is DCQCN's fluid model: N flows through one bottleneck
// as delay-differential equations, their fixed point, and its stability,
// the closed-form reference a conformance check holds a lab's DCQCN
// runs against. The model is that of Zhu, Ghobadi, Misra and Padhye,
// "ECN or Delay: Lessons Learnt from Analysis of DCQCN and TIMELY"
// (CoNEXT 2016), §3, which extends DCQCN's own (Zhu et al., SIGCOMM
// 2015) to flows of different states. Everything is in the target
// network's units: a lab's results compare after scale.Model's
// TargetTime and TargetRate.
//
// # The equations
//
// Numbered as in the paper ((1) and (2) are the reaction point's rules:
// a CNP sets R_T = R_C, R_C = R_C(1 - α/2), α = (1-g)α + g; no CNP for
// τ' decays α = (1-g)α). Write p° = p(t-τ*) and r° = R_C^(i)(t-τ*) for
// the delayed values; rates are in packets per second, B in packets:
//
//	p(t) = 0 for q <= K_min, (q - K_min)/(K_max - K_min) P_max up to K_max, 1 above   (3)
//	dq/dt = Σ_i R_C^(i)(t) - C                                                       (4)
//	dα/dt = g/τ' ((1 - (1-p°)^(τ' r°)) - α)                                           (5)
//	dR_T/dt = -(R_T - R_C)/τ (1 - (1-p°)^(τ r°))
//	          + R_AI r° (1-p°)^(F B) p° / ((1-p°)^(-B) - 1)
//	          + R_AI r° (1-p°)^(F T r°) p° / ((1-p°)^(-T r°) - 1)                       (6)
//	dR_C/dt = -R_C α/(2τ) (1 - (1-p°)^(τ r°))
//	          + (R_T - R_C)/2 r° p° / ((1-p°)^(-B) - 1)
//	          + (R_T - R_C)/2 r° p° / ((1-p°)^(-T r°) - 1)                              (7)
//
// with τ the CNP interval (50 µs: the least time between two CNPs, so
// between two cuts), τ' alpha's timer (55 µs), T the increase timer (55
// µs), B the byte counter, F the fast-recovery events, R_AI the additive
// step, g alpha's gain and τ* the control loop's delay (the paper's
// Table 1). 1 - (1-p°)^(τ r°) is the chance that a CNP interval brings a
// cut; r° p° / ((1-p°)^(-B) - 1) the rate of byte-counter events between
// marks, and (1-p°)^(F B) the share of them past fast recovery; the
// timer's terms are the same with T r° packets for B.
//
// The fixed point (Theorem 1, eqs. (8) to (13)): Σ R_C* = C (8), every
// flow at C/N (13), q* = K_min + p*/P_max (K_max - K_min) (9), α* = 1 -
// (1-p*)^(τ' R_C*) (10), and p* the root of
//
//	a² α* / ((b + d)(c + e)) = τ² R_AI R_C*                                           (11)
//
// with a = 1 - (1-p*)^(τ R_C*), b = p*/((1-p*)^(-B) - 1), c = b
// (1-p*)^(F B), d = p*/((1-p*)^(-T R_C*) - 1), e = d (1-p*)^(F T R_C*)
// (12). Eq. (14) is its small-p approximation (ApproxP).
//
// # What is here
//
//   - DCQCN, the parameters (FromTarget: those a lab of a scale.Target
//     derives its own from).
//   - FixedPoint solves (11) by bisection; ApproxP is (14);
//     WithQueueingDelay adds to τ* what bcfab's switches add to the loop.
//   - Simulate integrates (3) to (7) with a fixed step (Integrator: Heun's
//     method, the delayed terms from a ring of the past) and summarizes
//     the steady state (Summary: the mean queue, its amplitude, each
//     flow's mean rate, the convergence time).
//   - LinearStability linearizes at the fixed point and counts the roots
//     of the characteristic equation right of the imaginary axis, so
//     that a run that does not settle is explained rather than tolerated.
//
// The model counts packets: the rates and B turn into packets at
// DCQCN.WireBytes (a packet on the wire, as the shaper and the byte
// counter count it), K_min, K_max and the queue at DCQCN.QueueBytes (as
// a switch's queue counts it).
//
// # Where the model and bcfab differ
//
// Bounds: the paper's equations have none; here, as the reaction point
// does, R_C and R_T stay between the minimum rate and the line rate,
// alpha in [0, 1], the queue at 0 or more. So one flow whose line rate
// is C rests at C with an empty queue (Fixed.AboveLine says so). There
// is no buffer limit and no PFC (the paper ignores PFC: marking comes
// first), and no hyper increase (DCQCN.HAIRateBps).
//
// Loop delay: τ* is the whole loop, the model's sender feeding its queue
// at once. For n senders on one switch and their receiver that is the
// propagation of four links (2 x Target.OneHopRTT, 4 µs in the papers'
// network: the paper's "small" delay), the packets' serialization, and
// the receiver's reaction. bcfab's switches mark a packet as it joins
// the queue (queues.Egress), so its mark also waits for the queue ahead
// of it: WithQueueingDelay adds q*/C (about 8 µs at q* = 100 KB and 100
// Gb/s). The paper's switches mark on dequeue.
//
// Marks: the model's flows are identical and each cuts at its expected
// rate, where a switch marks packets one by one and each flow's cuts
// are its own. With N flows marked independently the sum of their
// rates swings less than N flows cutting together, and the queue sits
// nearer q* than the model's cycle: the dcqcn case's packet model
// (study/experiment's DCQCNPackets, the transport's rate machines
// marked packet by packet) keeps the model's level with identical flows
// and 22% more at N = 8 with independent ones, as a lab does
// (docs/VALIDATION.md, the dcqcn case).
//
// Fast recovery: in the model the first F events of each counter after
// a cut are fast recovery (an event is additive once F·T, or F·B, has
// passed without a mark). bcfab's reaction point (transport.DCQCN, the paper's
// variant) makes an event additive once either counter has reached F
// stages, so events 1 to F-1 are fast recovery and, once the timer has
// reached F, byte-counter events are additive too; the model with F-1
// is the nearer description of it. Its Mellanox variant (Mlx) differs
// more (CNPs noted and applied on a 50 µs clock, alpha on its own;
// cuts in a row keep the target; no byte counter) and is not this
// model.
//
// # What was checked, and how
//
// The equations above, their numbers, the symbols of Table 1 (τ the CNP
// timer, τ' alpha's) and the fixed point's equation were checked against
// the paper's LaTeX source as its authors published it (GitHub
// jitupadhye-zz/rdma, conext2016/dcqcn-model.tex, dcqcn-stability.tex);
// no code of theirs is used here. The tests reproduce the paper's
// statements on stability (§3.2) with its parameters (40 Gb/s, K_min 5
// KB, K_max 200 KB, P_max 1%, R_AI 40 Mb/s, 1 KB packets): at τ* = 4 µs
// 2 and 10 flows settle; at 85 µs 10 flows oscillate and 2 settle. They
// check the simulation against the linear analysis (growth rate and
// frequency of a small deviation), and the fixed point against the
// simulation's steady state. Not checked: the paper's figures, whose
// numbers are not published with it, and its "stable for 64 flows" at
// 85 µs: with 1 KB packets the fixed point of 64 flows lies above K_max,
// where RED has no slope, so the paper's model counted other packets or
// its figure used other parameters; the paper does not say which.
package fluid
