package lab

import "time"

// Calibration is what lab up measured of the emulator's own latency: the
// idle links' one-hop RTT with every delay line holding the model's full
// link delay (the shortest: see calibrate), and from it PerHop,
// the latency the emulator adds to every hop (the kernel's transmit, the
// peer's receive), which every delay line then takes off its hold.
type Calibration struct {
	IdleRTT time.Duration `json:"idle_rtt_ns"`
	PerHop  time.Duration `json:"per_hop_ns"`
	Samples uint64        `json:"samples"`
}
