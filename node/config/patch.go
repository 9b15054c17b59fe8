package config

// PatchPort names a fabric port whose cable is patched in memory: both of
// its nodes run on one worker process, which moves their frames without
// the kernel (package patch). Cable is the cable's name, the same at both
// ends.
type PatchPort struct {
	Port  string `json:"port"`
	Cable string `json:"cable"`
}

// Link modes: how a cable between nodes of one worker moves frames.
const (
	LinksPatch = "patch" // in memory, between the nodes' engines
	LinksVeth  = "veth"  // through the kernel: AF_XDP over a veth pair
)

// PatchCable is the cable port is patched to, or "" for a veth.
func (c *Node) PatchCable(port string) string {
	for _, p := range c.Patches {
		if p.Port == port {
			return p.Cable
		}
	}
	return ""
}
