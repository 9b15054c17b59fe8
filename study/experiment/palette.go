package experiment

import (
	"hash/fnv"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg/draw"

	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/scheme"
)

// The contenders' looks. A contender has the same colour and marker in
// every plot of every experiment: Okabe and Ito's colour-blind-safe palette
// (its yellow left out, too pale on white), then dark colours of Paul
// Tol's muted palette for the variants, grey for Go-Back-N.
type contenderStyle struct {
	color color.RGBA
	glyph draw.GlyphDrawer
}

func rgb(v uint32) color.RGBA { return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255} }

var contenderStyles = map[string]contenderStyle{
	scheme.NamePortFC:                           {rgb(0xD55E00), draw.CircleGlyph{}},   // vermillion
	scheme.NamePortFC + ":" + scheme.RelayDRR:   {rgb(0x882255), draw.RingGlyph{}},     // wine
	scheme.NamePFC:                              {rgb(0x0072B2), draw.SquareGlyph{}},   // blue
	scheme.NamePFCStar:                          {rgb(0x56B4E9), draw.TriangleGlyph{}}, // sky blue
	scheme.NameBFC:                              {rgb(0x009E73), draw.PyramidGlyph{}},  // bluish green
	scheme.NameBFC + ":2":                       {rgb(0x999933), draw.BoxGlyph{}},      // olive
	scheme.NameBFC + ":" + scheme.BFCAssignHash: {rgb(0x332288), draw.PlusGlyph{}},     // indigo
	scheme.NameIRN:                              {rgb(0xCC79A7), draw.CrossGlyph{}},    // reddish purple
	scheme.NameGBN:                              {rgb(0x777777), draw.BoxGlyph{}},      // grey
	scheme.NameNone:                             {rgb(0x000000), draw.CrossGlyph{}},    // black
	scheme.NameICI:                              {rgb(0xAA4499), draw.CircleGlyph{}},   // purple
	scheme.NameCI:                               {rgb(0xDDCC77), draw.TriangleGlyph{}}, // sand
	scheme.NamePFC + "/" + noCC:                 {rgb(0x44AA99), draw.RingGlyph{}},     // teal
	// The baselines of BFC's paper (study/experiment/defs/bfc-clos.yaml),
	// each apart from every colour here: Paul Tol's bright red, dark
	// brown and blue from his sunset and muted sets, and dark grey for
	// the ideal.
	scheme.NamePFC + "/hpcc":  {rgb(0xDC050C), draw.TriangleGlyph{}}, // red
	scheme.NameSFQ + "/hpcc":  {rgb(0x661100), draw.SquareGlyph{}},   // brown
	scheme.NamePFC + "/dctcp": {rgb(0x5568B8), draw.RingGlyph{}},     // blue
	// DCQCN's Mellanox variant (study/experiment/defs/ns3-*.yaml): violet,
	// apart from every colour here.
	scheme.NamePFC + "/dcqcn-mlx": {rgb(0x7700DD), draw.TriangleGlyph{}},
	scheme.NameIdealFQ:            {rgb(0x555555), draw.CircleGlyph{}}, // dark grey
	// PFC on an FC+ fabric's routings (study/experiment/defs/fcplus.yaml): FC+'s
	// DF-KSP in warm colours, FC and plain KSP in cool ones, each apart
	// from every colour above (Paul Tol's vibrant magenta and green).
	scheme.NamePFC + "@" + string(fcplus.DFKSP1): {rgb(0xFFAA00), draw.CircleGlyph{}},   // amber
	scheme.NamePFC + "@" + string(fcplus.DFKSP2): {rgb(0xEE3377), draw.RingGlyph{}},     // magenta
	scheme.NamePFC + "@" + string(fcplus.FC):     {rgb(0x117733), draw.TriangleGlyph{}}, // green
	scheme.NamePFC + "@" + string(fcplus.KSP):    {rgb(0x1144EE), draw.SquareGlyph{}},   // strong blue
}

// dilationColors are a scheme's at the D of the invariance study
// (study/experiment/defs/invariance-*.yaml), beside its own colour at
// the experiment's D: Paul Tol's indigo, green, sand and wine.
var dilationColors = map[string]color.RGBA{
	"2000": rgb(0x332288), "1000": rgb(0x117733), "500": rgb(0xDDAA33), "333": rgb(0x882255),
}

// reserveColors are for contenders outside contenderStyles (pfc/gbn,
// bfc:hash:8): one by a hash of the name, the same in every plot,
// though two such contenders may share one.
var reserveColors = []color.RGBA{rgb(0x117733), rgb(0xAA4499), rgb(0x44AA99), rgb(0x661100), rgb(0x6699CC), rgb(0xE69F00), rgb(0xDDAA33)}

var reserveGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}}

// styleOf is contender's colour and marker: one without congestion
// control (FC/nocc) has its flow control's unless it has its own.
// The simulator's run of a contender (ns3:pfc) has the contender's
// colour and a ring: the pair reads as one scheme in two tools.
func styleOf(contender string) contenderStyle {
	if s, ok := contenderStyles[contender]; ok {
		return s
	}
	if sc, err := ParseContender(contender); err == nil && len(sc.Knobs) > 0 {
		// A scheme at other lab knobs (a sweep): its marker, its colour
		// darker or lighter by the knobs' values.
		s := styleOf(sc.withoutKnobs())
		s.color = shade(s.color, knobShade(sc.Knobs))
		return s
	}
	if base, d, ok := strings.Cut(contender, dPrefix); ok {
		// A scheme at another D: its marker, a colour of its D.
		s := styleOf(base)
		if c, ok := dilationColors[d]; ok {
			s.color = c
		} else {
			h := fnv.New32a()
			h.Write([]byte(d))
			s.color = reserveColors[h.Sum32()%uint32(len(reserveColors))]
		}
		return s
	}
	if base, ok := strings.CutPrefix(contender, simPrefix); ok {
		s := styleOf(base)
		s.glyph = draw.RingGlyph{}
		if _, ring := styleOf(base).glyph.(draw.RingGlyph); ring {
			s.glyph = draw.CircleGlyph{}
		}
		return s
	}
	if fc, ok := strings.CutSuffix(contender, "/"+noCC); ok {
		if s, ok := contenderStyles[fc]; ok {
			return s
		}
	}
	h := fnv.New32a()
	h.Write([]byte(contender))
	v := h.Sum32()
	return contenderStyle{reserveColors[v%uint32(len(reserveColors))], reserveGlyphs[(v/7)%uint32(len(reserveGlyphs))]}
}

// knobShade is how far a contender at lab knobs ks moves its scheme's
// colour: toward black (negative) or white (positive), by its first
// knob with a number (a size, a duration or a plain number): the
// number's log2 taken modulo knobCycle, so that a sweep's values a
// factor of 1.5 to 16 apart get shades at least a tenth apart, none
// nearer the scheme's own than 0.15; the same value gives the same
// shade in every file. Knobs without a number shade by a hash.
func knobShade(ks []KnobValue) float64 {
	const span, least = 0.6, 0.15
	p := -1.0
	for _, k := range ks {
		if v := knobNumber(k.Value); v > 0 {
			l := math.Log2(v) / knobCycle
			p = l - math.Floor(l)
			break
		}
	}
	if p < 0 {
		h := fnv.New32a()
		for _, k := range ks {
			h.Write([]byte(k.Key + "=" + k.Value + ";"))
		}
		p = float64(h.Sum32()%1000) / 1000
	}
	f := -span + 2*span*p
	if math.Abs(f) < least {
		f = math.Copysign(least, f)
	}
	return f
}

// knobCycle is the log2 range over which knobShade's shades repeat: a
// factor of 32.
const knobCycle = 5

// knobNumber is a knob value's number: a size in bytes, a duration in
// ns, or the number itself; 0 when it has none.
func knobNumber(v string) float64 {
	if n, err := units.ParseSize(v); err == nil {
		return float64(n)
	}
	if d, err := units.ParseDuration(v); err == nil {
		return float64(d)
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) {
		return f
	}
	return 0
}

// shade moves c toward black (f < 0) or white (f > 0) by |f|.
func shade(c color.RGBA, f float64) color.RGBA {
	to, a := 0.0, -f
	if f > 0 {
		to, a = 255, f
	}
	mix := func(v uint8) uint8 { return uint8(float64(v) + (to-float64(v))*a + 0.5) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), c.A}
}

func contenderColor(contender string) color.Color { return styleOf(contender).color }

// faded is c at the given opacity (a band's fill).
func faded(c color.Color, alpha float64) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = uint8(255 * alpha)
	return n
}
