package intern

import "testing"

func TestTable(t *testing.T) {
	var tab Table[int32]
	if tab.ID("") != 0 || tab.Name(0) != "" || tab.Len() != 0 {
		t.Fatal(`"" is not 0 in an empty table`)
	}
	a, b := tab.ID("a"), tab.ID("b")
	if a != 1 || b != 2 || tab.ID("a") != 1 || tab.Len() != 2 {
		t.Errorf("ids a %d, b %d, a again %d, len %d", a, b, tab.ID("a"), tab.Len())
	}
	if tab.Name(a) != "a" || tab.Name(b) != "b" || tab.Name(3) != "" || tab.Name(-1) != "" {
		t.Errorf("names %q %q %q %q", tab.Name(a), tab.Name(b), tab.Name(3), tab.Name(-1))
	}
	if got := tab.Names(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Names %q", got)
	}
	var u Table[uint32]
	if u.ID("x") != 1 || u.Name(1) != "x" || u.Name(2) != "" {
		t.Error("uint32 ids")
	}
}
