package lab

// Lab files: a lab as YAML, for lab up -f and lab inspect -o yaml.
//
//  1. ReadFile decodes the YAML strictly (an unknown key is an error) into
//     File, whose values are read by their knobs (knob.go) as lab up's
//     flags are, every error naming its line;
//  2. File.Spec lays the keys present over Defaults, the values lab up's
//     flags default to, through the knobs that the flags set too, so a
//     file and the flags it spells out give the same Spec;
//  3. NewPlan validates the Spec; an error it finds is charged to the key
//     whose removal changes it, so it names that key's line too.
//
// Nothing is created until all three pass.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bcfab/bcfab/model/units"
)

// File is a lab file. Its keys are the knobs (Knobs: lab up's flags,
// without the dashes), plus the name, the topology and per-cable
// overrides:
//
//	name: pf
//	topology:
//	  kind: bcube
//	  n: 4
//	  k: 1
//	  links:
//	    - endpoints: ["h1:eth0", "s0.0:p1"]
//	      loss: 1%
//	rate: 100M
//	fc: portfc
//
// A key left out takes the knob's default. Topology kind railonly is the
// Rail-only preset (RailOnly): k 1, n 4 unless given, and the preset's
// level rates unless the file has rates.
type File struct {
	Name     string       `yaml:"name,omitempty"`
	Topology FileTopology `yaml:"topology"`
	// Values are the knobs the file gives, as written.
	Values Values `yaml:"-"`

	// lines holds the line of every key present, top-level keys by name
	// and link keys as "links[i]".
	lines map[string]int
	order []string // the keys present, in file order
}

// fileYAML is a lab file as the yaml package decodes it: the knobs'
// keys, and any other, fall into Knobs.
type fileYAML struct {
	Name     string               `yaml:"name,omitempty"`
	Topology FileTopology         `yaml:"topology"`
	Knobs    map[string]yaml.Node `yaml:",inline"`
}

// FileTopology is the fabric: BCube(n, k) and the cables that differ from
// the rest, or a fabric given as a graph (kind leafspine, fattree or
// expander) with its parameters, the keys of lab up's flags (k is a
// fat-tree's k there).
type FileTopology struct {
	Kind  string     `yaml:"kind"`
	N     int        `yaml:"n,omitempty"`
	K     int        `yaml:"k,omitempty"`
	Links []FileLink `yaml:"links,omitempty"`

	Leaves           int     `yaml:"leaves,omitempty"`
	Spines           int     `yaml:"spines,omitempty"`
	Oversubscription float64 `yaml:"oversubscription,omitempty"`
	Hosts            int     `yaml:"hosts,omitempty"`
	ToRs             int     `yaml:"tors,omitempty"`
	Degree           int     `yaml:"degree,omitempty"`
	Ports            int     `yaml:"ports,omitempty"`
	Virtual          int     `yaml:"virtual,omitempty"`
	Scenario         string  `yaml:"scenario,omitempty"`
	Seed             uint64  `yaml:"seed,omitempty"`
	Routing          string  `yaml:"routing,omitempty"`
	Paths            int     `yaml:"paths,omitempty"`
}

// fabric is the graph fabric the topology names (nil for BCube).
func (t FileTopology) fabric() *FabricSpec {
	if !slices.Contains(GraphKinds, t.Kind) {
		return nil
	}
	f := &FabricSpec{Kind: t.Kind, Leaves: t.Leaves, Spines: t.Spines, Oversubscription: t.Oversubscription,
		Hosts: t.Hosts, ToRs: t.ToRs, Degree: t.Degree, Seed: t.Seed, Routing: t.Routing, Paths: t.Paths,
		Ports: t.Ports, Virtual: t.Virtual, Scenario: t.Scenario}
	if t.Kind == TopologyFatTree {
		f.K = t.K
	}
	return f
}

// FileLink overrides one cable (LinkSpec).
type FileLink struct {
	Endpoints []string    `yaml:"endpoints,flow"`
	Rate      *units.Rate `yaml:"rate,omitempty"`
	Loss      *units.Loss `yaml:"loss,omitempty"`
	Down      bool        `yaml:"down,omitempty"`
}

// ReadFile reads a lab file and returns its Spec, validated; an error
// names the file and line ("lab.yaml:7: ...").
func ReadFile(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, err
	}
	f, err := ParseFile(b)
	if err != nil {
		return Spec{}, fmt.Errorf("%s:%w", path, err)
	}
	s, err := f.Check()
	if err != nil {
		return Spec{}, fmt.Errorf("%s:%w", path, err)
	}
	return s, nil
}

// lineError is an error at a line of a lab file; it prints as
// "LINE: message", so a caller prefixing "file:" reads like a compiler.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("%d: %v", e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }

// ParseFile decodes a lab file; a malformed one gets one error naming its
// line. Values are read, not validated as a lab (see Check).
func ParseFile(b []byte) (*File, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		line := 1
		if len(root.Content) > 0 {
			line = root.Content[0].Line
		}
		return nil, &lineError{line, errors.New("a lab file is a mapping: name, topology, rate, ...")}
	}
	f := &File{lines: map[string]int{}}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		f.lines[k.Value] = k.Line
		f.order = append(f.order, k.Value)
		if k.Value == "topology" && v.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(v.Content); j += 2 {
				if v.Content[j].Value == "links" && v.Content[j+1].Kind == yaml.SequenceNode {
					for n, l := range v.Content[j+1].Content {
						key := fmt.Sprintf("links[%d]", n)
						f.lines[key] = l.Line
						f.order = append(f.order, key)
					}
				}
			}
		}
	}
	// Values that read themselves (sizes, rates, ...) are read first, at
	// their lines: the yaml package reports their errors without one.
	if err := lineValues(m); err != nil {
		return nil, err
	}
	// Strict decoding: an unknown key, or a value of the wrong kind, is
	// an error with its line.
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var y fileYAML
	if err := dec.Decode(&y); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(err)
	}
	f.Name, f.Topology, f.Values = y.Name, y.Topology, Values{}
	for _, key := range f.order {
		v, ok := y.Knobs[key]
		if !ok {
			continue // name, topology, a link
		}
		if err := checkKey(key, "name", "topology"); err != nil {
			return nil, &lineError{f.line(key), fmt.Errorf("%w; the keys are lab up's flags without their dashes (lab up -h)", err)}
		}
		if v.Kind != yaml.ScalarNode {
			return nil, &lineError{v.Line, fmt.Errorf("%s: want one value, not a %s", key, map[yaml.Kind]string{yaml.SequenceNode: "list", yaml.MappingNode: "mapping"}[v.Kind])}
		}
		f.Values[key] = v.Value
	}
	return f, nil
}

// lineValues reads every scalar under a key whose value type reads
// itself, so that its error carries the line.
func lineValues(n *yaml.Node) error {
	readers := map[string]func(string) error{}
	for _, k := range knobs {
		readers[k.Name] = k.parse // and a link's rate and loss, read alike
	}
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if read, ok := readers[k.Value]; ok && v.Kind == yaml.ScalarNode {
					if err := read(v.Value); err != nil {
						return &lineError{v.Line, fmt.Errorf("%s: %w", k.Value, err)}
					}
				}
				if err := walk(v); err != nil {
					return err
				}
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				if err := walk(c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(n)
}

// yamlError turns the yaml package's error into one at a line: its
// messages say "yaml: line N: ..." or "line N: ...".
func yamlError(err error) error {
	var le *lineError
	if errors.As(err, &le) {
		return le
	}
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0] // the first: one error
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	var line int
	if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
		_, rest, _ := strings.Cut(msg, ": ")
		return &lineError{line, errors.New(userWords(rest))}
	}
	return &lineError{1, errors.New(userWords(msg))}
}

var (
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type lab\.(\w+)$`)
	badKindRE      = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
)

// userWords says the yaml package's complaints in a lab file's terms:
// its keys and values, not Go's types.
func userWords(msg string) string {
	if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
		// A top-level key is a knob's (ParseFile checks those).
		where, keys := " under topology", fileKeys(reflect.TypeFor[FileTopology]())
		if m[2] == "FileLink" {
			where, keys = " in a link", fileKeys(reflect.TypeFor[FileLink]())
		}
		hint := ""
		if k := closestKey(m[1], keys); k != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", k)
		}
		return fmt.Sprintf("unknown key %s%s%s; the keys are lab up's flags without their dashes (lab up -h)", m[1], where, hint)
	}
	if m := badKindRE.FindStringSubmatch(msg); m != nil {
		want := map[string]string{"int": "a whole number", "bool": "true or false", "float64": "a number", "string": "a word",
			"[]string": "a list"}[m[3]]
		if want == "" {
			want = "a mapping of keys"
			if strings.HasPrefix(m[3], "[]") {
				want = "a list"
			}
		}
		return fmt.Sprintf("%q: want %s", m[2], want)
	}
	return msg
}

// fileKeys are the keys a lab file type takes.
func fileKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// closestKey is the key of keys nearest to k (a typo, a longer name of
// it, another way to write it), or "".
func closestKey(k string, keys []string) string {
	aliases := map[string]string{"flowcontrol": "fc", "flow-control": "fc", "flow_control": "fc", "scheme": "fc",
		"bandwidth": "rate", "speed": "rate", "latency": "delay", "buffer-size": "buffer", "drop": "loss"}
	if a, ok := aliases[strings.ToLower(k)]; ok {
		return a
	}
	best, bestD := "", 3 // at most two edits away
	for _, c := range keys {
		if d := editDistance(strings.ToLower(k), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is Levenshtein's distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Spec is the lab the file describes: its keys laid over Defaults.
func (f *File) Spec() Spec {
	s := Defaults()
	_ = f.apply(&s, "") // Check reports the error
	return s
}

// apply lays the file's keys over s, but not skip (a key, or "links[i]").
func (f *File) apply(s *Spec, skip string) error {
	if f.Name != "" && skip != "name" {
		s.Name = f.Name
	}
	if skip != "topology" {
		s.N, s.K = f.Topology.N, f.Topology.K
		if s.Fabric = f.Topology.fabric(); s.Fabric != nil {
			s.N, s.K = 0, 0
		}
	}
	v := f.Values
	if _, ok := v[skip]; ok {
		v = maps.Clone(v)
		delete(v, skip)
	}
	err := v.Apply(s)
	if f.Topology.Kind == TopologyRailOnly && skip != "topology" {
		*s = RailOnly(*s)
	}
	s.Links = nil
	for i, l := range f.Topology.Links {
		if skip == fmt.Sprintf("links[%d]", i) {
			continue
		}
		ls := LinkSpec{Endpoints: l.Endpoints, Down: l.Down}
		if l.Rate != nil {
			ls.RateBps = uint64(*l.Rate)
		}
		if l.Loss != nil {
			ppm := int(*l.Loss)
			ls.LossPPM = &ppm
		}
		s.Links = append(s.Links, ls)
	}
	return err
}

// Check returns the file's Spec once NewPlan accepts it; its error names
// the line of the key at fault: the first key (in file order, name and
// topology last) without which the error changes.
func (f *File) Check() (Spec, error) {
	s := Defaults()
	if err := f.apply(&s, ""); err != nil {
		key, _, _ := strings.Cut(err.Error(), ":") // Values.Apply names it
		return s, &lineError{f.line(key), err}
	}
	_, hasRate := f.Values["rate"]
	_, hasRates := f.Values["rates"]
	switch kind := f.Topology.Kind; {
	case kind != TopologyBCube && kind != TopologyRailOnly && !slices.Contains(GraphKinds, kind):
		return s, &lineError{f.line("topology"), fmt.Errorf("topology kind %q: want bcube, railonly, %s", kind, orList(GraphKinds))}
	case s.Fabric == nil && (f.Topology.Leaves != 0 || f.Topology.Spines != 0 || f.Topology.Oversubscription != 0 || f.Topology.Hosts != 0 ||
		f.Topology.ToRs != 0 || f.Topology.Degree != 0 || f.Topology.Seed != 0 || f.Topology.Routing != "" || f.Topology.Paths != 0 ||
		f.Topology.Ports != 0 || f.Topology.Virtual != 0 || f.Topology.Scenario != ""):
		return s, &lineError{f.line("topology"), fmt.Errorf("topology %s: leaves, spines, oversubscription, hosts, tors, degree, ports, virtual, scenario, seed, routing and paths are for leafspine, fattree, expander or fcplus", kind)}
	case s.Fabric != nil && f.Topology.N != 0:
		return s, &lineError{f.line("topology"), fmt.Errorf("topology %s: n is BCube's", kind)}
	case kind == TopologyRailOnly && f.Topology.K != 0 && f.Topology.K != 1:
		return s, &lineError{f.line("topology"), fmt.Errorf("topology railonly is BCube(n,1): k %d", f.Topology.K)}
	case hasRate && hasRates:
		return s, &lineError{f.line("rates"), errors.New("rates and rate: give one (rates sets every level's)")}
	}
	_, err := NewPlan(s)
	if err == nil {
		return s, nil
	}
	// The values before what they apply to: name and topology last, as
	// without them nearly every error changes.
	var order []string
	for _, key := range f.order {
		if key != "name" && key != "topology" {
			order = append(order, key)
		}
	}
	for _, key := range append(order, "name", "topology") {
		t := Defaults()
		_ = f.apply(&t, key)
		if _, err2 := NewPlan(t); err2 == nil || err2.Error() != err.Error() {
			return s, &lineError{f.line(key), err}
		}
	}
	return s, &lineError{f.line("topology"), err}
}

// line is the line of key, or 1.
func (f *File) line(key string) int {
	if l, ok := f.lines[key]; ok {
		return l
	}
	return 1
}

// FileOf is the lab file of s: every knob whose value differs from
// Defaults, with the name and topology always. Spec() of the result
// equals s up to the defaults NewPlan fills in.
func FileOf(s Spec) *File {
	f := &File{Name: s.Name, Topology: FileTopology{Kind: "bcube", N: s.N, K: s.K}, Values: ValuesOf(s)}
	if g := s.Fabric; g != nil {
		f.Topology = FileTopology{Kind: g.Kind, K: g.K, Leaves: g.Leaves, Spines: g.Spines, Oversubscription: g.Oversubscription,
			Hosts: g.Hosts, ToRs: g.ToRs, Degree: g.Degree, Seed: g.Seed, Routing: g.Routing, Paths: g.Paths,
			Ports: g.Ports, Virtual: g.Virtual, Scenario: g.Scenario}
	}
	for _, l := range s.Links {
		fl := FileLink{Endpoints: l.Endpoints, Down: l.Down}
		if l.RateBps != 0 {
			r := units.Rate(l.RateBps)
			fl.Rate = &r
		}
		if l.LossPPM != nil {
			v := units.Loss(*l.LossPPM)
			fl.Loss = &v
		}
		f.Topology.Links = append(f.Topology.Links, fl)
	}
	return f
}

// WriteYAML writes the file as YAML, with a first comment line saying
// what it is.
func (f *File) WriteYAML(w io.Writer, comment string) error {
	if comment != "" {
		if _, err := fmt.Fprintf(w, "# %s\n", comment); err != nil {
			return err
		}
	}
	var doc yaml.Node
	if err := doc.Encode(fileYAML{Name: f.Name, Topology: f.Topology}); err != nil {
		return err
	}
	for _, k := range knobs {
		if v, ok := f.Values[k.Name]; ok {
			doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k.Name}, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
		}
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	return enc.Close()
}
