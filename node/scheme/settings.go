package scheme

import (
	"fmt"
	"time"

	"github.com/bcfab/bcfab/node/config"
)

// What more than one scheme reads of a node's config, or says of it.

// Knobs are the settings of a lab that a scheme's variants set.
type Knobs struct {
	BFCQueues  int    // BFC's queues per port, the HQ included
	BFCAssign  string // BFCAssignDynamic or BFCAssignHash
	RelayQueue string // RelayStrict or RelayDRR
}

// checkRefresh checks the refresh period of a scheme that repeats its
// signalled states.
func checkRefresh(c *config.Node) error {
	if c.FCRefresh.D() < 10*time.Microsecond {
		return fmt.Errorf("fc_refresh %v: want at least 10us", c.FCRefresh.D())
	}
	return nil
}

// checkHold checks that a receiver's pause outlasts three refreshes.
func checkHold(c *config.Node) error {
	if c.FCHold < 3*c.FCRefresh {
		return fmt.Errorf("fc_hold %v: want at least three refreshes (%v)", c.FCHold.D(), 3*c.FCRefresh.D())
	}
	return nil
}

// bytesBDP is n bytes, and how many one-hop BDPs of bdp bytes they are.
func bytesBDP(n, bdp int) string {
	if bdp <= 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%d B (%.3g BDP)", n, float64(n)/float64(bdp))
}

// portBDPs are the one-hop BDPs of c's fabric ports in bytes, in engine
// order (config.Node.PortBDP): the unit of their thresholds, which a
// port's pause timing reports beside them.
func portBDPs(c *config.Node) []int {
	var out []int
	for _, name := range c.FabricPorts() {
		out = append(out, c.PortBDP(name))
	}
	return out
}

// portBDP is port p's of bdp, 0 if unknown.
func portBDP(bdp []int, p int) int {
	if p < len(bdp) {
		return bdp[p]
	}
	return 0
}
