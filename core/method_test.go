package core

import (
	"strings"
	"testing"
)

type namedMethod struct {
	name string
	doc  MethodDoc
}

func (m namedMethod) Name() string   { return m.name }
func (m namedMethod) Doc() MethodDoc { return m.doc }

type noSteps struct{}

func (noSteps) Steps(WrittenPhase) (MethodSteps, []error) { return MethodSteps{}, nil }

// A method's name is its key in suites and its kind in archives: a bad one, a
// repeated one, one a workload kind or a suite key has, or a method without a
// section to decode, is refused at registration, as a workload is.
func TestRegisterMethodRefuses(t *testing.T) {
	RegisterMethod(namedMethod{"m_test_once", noSteps{}})
	ReserveWorkloadNames("a test's phase", "m_test_key")
	for _, tc := range []struct {
		m    Method
		want string
	}{
		{namedMethod{"Bad-Name", noSteps{}}, "needs a lower-case name"},
		{namedMethod{"m_test_nodoc", nil}, "and a Doc"},
		{namedMethod{"m_test_once", noSteps{}}, "registered twice"},
		{namedMethod{"m_test_key", noSteps{}}, "is a key of a test's phase"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("%s: %v, want a panic saying %q", tc.m.Name(), r, tc.want)
				}
			}()
			RegisterMethod(tc.m)
		}()
	}
	if m, ok := LookupMethod("m_test_once"); !ok || m.Name() != "m_test_once" {
		t.Errorf("the registered method is not found")
	}
}
