package api

// ClassifierStats is what the classifier on a server's bc0 did (GET
// /classifier on hostd's control socket): the class, an 802.1Q priority,
// it gave the kernel's frames, by that class.
type ClassifierStats struct {
	// Attached: the program runs on bc0 (a TCX link of hostd's).
	Attached bool `json:"attached"`
	// DSCPMap is the map in force, "26=3,46=5" (none: empty).
	DSCPMap string `json:"dscp_map"`
	// Classes has one entry per priority 0..7.
	Classes [8]ClassCounters `json:"classes"`
	// Untagged counts frames left as they were (not IPv4: ARP, IPv6).
	Untagged ClassCounters `json:"untagged"`
}

// ClassCounters count the frames and bytes of one class.
type ClassCounters struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}
