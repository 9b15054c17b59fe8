package throughput

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/bcfab/bcfab/fabric/topo"
)

// ExactLimit bounds the variables Exact accepts: gonum's simplex works
// on a dense matrix, rows × columns of it.
const ExactLimit = 4_000_000

// Exact solves the maximum concurrent flow LP with gonum's simplex. In
// standard form, with x_jp the flow of commodity j on its path p, s_a the
// slack of arc a and λ:
//
//	minimise  -λ
//	s.t.      Σ_p x_jp - d_j·λ   = 0    for each commodity j
//	          Σ_{jp ∋ a} x_jp + s_a = c_a  for each arc a in use
//	          x, s, λ >= 0
//
// x = 0, λ = 0, s = c is a feasible start whose basis (the first path of
// each commodity and every slack) is triangular, so no phase I is needed.
func Exact(g *topo.Graph, cs []Commodity) (Result, error) {
	var res Result
	res.Flow = make([][]float64, len(cs))
	for i, c := range cs {
		res.Flow[i] = make([]float64, len(c.Paths))
		if c.Demand > 0 && len(c.Paths) == 0 {
			res.Unroutable++
		}
	}
	if res.Unroutable > 0 {
		return res, nil
	}
	row := map[topo.Arc]int{}
	var live []int // commodities with demand
	for i, c := range cs {
		if c.Demand <= 0 {
			continue
		}
		live = append(live, i)
		for _, p := range c.Paths {
			for _, a := range p {
				if _, ok := row[a]; !ok {
					row[a] = len(row)
				}
			}
		}
	}
	if len(live) == 0 {
		return Result{}, ErrNoDemand
	}
	nx := 0
	col := make([]int, len(cs)) // first x column of each commodity
	for _, i := range live {
		col[i] = nx
		nx += len(cs[i].Paths)
	}
	rows := len(live) + len(row)
	cols := nx + len(row) + 1
	if rows*cols > ExactLimit {
		return Result{}, fmt.Errorf("exact: %d × %d LP is past the %d-entry limit of a dense simplex", rows, cols, ExactLimit)
	}
	lam := cols - 1
	A := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	for r, i := range live {
		for p, path := range cs[i].Paths {
			A.Set(r, col[i]+p, 1)
			for _, a := range path {
				A.Set(len(live)+row[a], col[i]+p, A.At(len(live)+row[a], col[i]+p)+1)
			}
		}
		A.Set(r, lam, -cs[i].Demand)
	}
	for a, r := range row {
		A.Set(len(live)+r, nx+r, 1)
		b[len(live)+r] = g.Capacity(a)
	}
	c := make([]float64, cols)
	c[lam] = -1
	basic := make([]int, 0, rows)
	for _, i := range live {
		basic = append(basic, col[i])
	}
	for r := range len(row) {
		basic = append(basic, nx+r)
	}
	opt, x, err := lp.Simplex(c, A, b, 1e-10, basic)
	if err != nil {
		return Result{}, fmt.Errorf("exact: %w", err)
	}
	res.Lambda, res.Upper = -opt, -opt
	for _, i := range live {
		copy(res.Flow[i], x[col[i]:col[i]+len(cs[i].Paths)])
	}
	return res, nil
}
