package bench

import (
	"reflect"
	"testing"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/scheme"
)

func TestSetScheme(t *testing.T) {
	base := lab.Spec{RelayQueue: "drr", BFCQueues: 8, BFCAssign: "hash"}
	for _, c := range []struct {
		scheme string
		want   lab.Spec
		err    bool
	}{
		{"pfc", lab.Spec{FC: scheme.NamePFC}, false},
		{"portfc", lab.Spec{FC: scheme.NamePortFC, RelayQueue: "drr"}, false},
		{"portfc:strict", lab.Spec{FC: scheme.NamePortFC, RelayQueue: "strict"}, false},
		{"bfc", lab.Spec{FC: scheme.NameBFC, BFCQueues: 8, BFCAssign: "hash"}, false},
		{"bfc:2", lab.Spec{FC: scheme.NameBFC, BFCQueues: 2, BFCAssign: "hash"}, false},
		{"bfc:dynamic:32", lab.Spec{FC: scheme.NameBFC, BFCQueues: 32, BFCAssign: "dynamic"}, false},
		{"bfc:x", lab.Spec{}, true},
		{"pfc:2", lab.Spec{}, true},
		{"portfc:hash", lab.Spec{}, true},
	} {
		s := base
		err := SetScheme(&s, c.scheme)
		if (err != nil) != c.err {
			t.Errorf("%s: error %v, want one: %v", c.scheme, err, c.err)
			continue
		}
		if err == nil && !reflect.DeepEqual(s, c.want) {
			t.Errorf("%s: %+v, want %+v", c.scheme, s, c.want)
		}
	}
}
