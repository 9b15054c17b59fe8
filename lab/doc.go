// Package lab builds, runs and removes an emulated BCube(n, k) fabric on one
// Linux machine: one network namespace per node, veth pairs for the cables,
// and the nodes' engines, on worker processes (bcfabd, each serving many
// nodes on one thread; the default) or in a daemon per node (swd for a
// switch, hostd for a server) started inside its namespace.
//
// A lab's parameters are knobs (knob.go): each is declared once, in one
// table, with its name, units, default or the rule that derives it from
// the target and D, help and reader. lab up's flags, a lab file's keys
// (File), an experiment's lab section and lab inspect -o yaml (FileOf)
// are made from the table; Spec holds the values, and every node's
// config.Node takes those it has a field for (nodeConfig).
//
// Bringing a lab up is a pipeline (see Up):
//
//  1. Validate the Spec and resolve it into a Plan: every namespace, link
//     end, MAC, address, daemon config and file path, before anything is
//     created.
//  2. Claim the run directory <RunRoot>/<Name> and write state.json, the
//     record of intent that Down works from even after a crash.
//  3. Create the namespaces <Name>-h<i> and <Name>-s<l>.<w> (IPv6 off, lo up,
//     and bc0 <-> bc0nic with the server's address in every server).
//  4. Create the fabric veth pairs straight into their namespaces and bring
//     them up; nothing of a lab is ever configured in the root namespace.
//  5. Write each node's config.Node (and each worker's config.Worker) and
//     the ethers file naming every MAC by node and port (ethers.go), and
//     every namespace's hosts file naming the servers (hosts.go), and
//     start the workers, or the daemons with ip netns exec, recording
//     their pids in state.json as they start.
//  6. Wait until every node answers GET /healthz on its control socket.
//
// A failure at any step removes everything created so far. Down removes a
// lab from its state file alone; Status, Stats and List read a running lab.
//
// On a running lab, RunWorkload drives the servers' RDMA NICs with the
// flows of a workload.Config and reports their FCTs (WorkloadReport), and
// SampleHealth samples the emulation's health: every report of a run
// carries a Health, and a run whose daemons did not keep up is flagged
// invalid (see health.go for the rules). A run watches the processes that
// host the lab's nodes and stops when one dies (watch_linux.go).
//
// What a daemon of its own node can rely on, and what the lab expects of
// it (a worker's nodes get the same, through their worker):
//
//   - It is started as ip netns exec <ns> <BinDir>/swd|hostd --config <file>
//     (no other flag), in its node's namespace with that namespace's /sys,
//     in a session of its own, cwd the run directory, stdin /dev/null,
//     stdout and stderr appended to <run>/logs/<node>.log, and the lab
//     process's environment.
//   - The config is a config.Node in JSON with SetDefaults applied;
//     every port it names exists, up, MTU 1500, with its bcube MAC, IPv6
//     off; bc0 has the server's address, and TX offloads are left as the
//     kernel sets them.
//   - It serves HTTP on the unix socket Config.Control: GET /healthz
//     answers 200 once it forwards (Up waits for every daemon, up to
//     Spec.HealthTimeout, and fails at once if one exits), GET /stats
//     answers api.Stats, GET /link every port's injected impairment
//     ([]api.LinkState) and POST /link (a api.LinkRequest)
//     changes one fabric port's and answers its new state (SetLink).
//   - Down sends SIGTERM, waits up to StopGrace (3 s), then sends SIGKILL;
//     it then deletes the namespaces, so anything attached to an
//     interface must go with the process (bpf_links do).
package lab
