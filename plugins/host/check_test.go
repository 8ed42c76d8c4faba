package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"
	"github.com/cmpbench/cmpbench/plugins/sdk"
)

// liar is a plugin whose engine measures truly and whose RunPhase stream then
// alters what it sends, as a plugin built from the SDK template can.
type liar struct {
	*sdk.Server
	lie func(ev *pluginv1.PhaseEvent)
}

func (l liar) RunPhase(req *pluginv1.RunPhaseRequest, stream pluginv1.Adapter_RunPhaseServer) error {
	return l.Server.RunPhase(req, lyingStream{stream, l.lie})
}

type lyingStream struct {
	pluginv1.Adapter_RunPhaseServer
	lie func(ev *pluginv1.PhaseEvent)
}

func (s lyingStream) Send(ev *pluginv1.PhaseEvent) error {
	s.lie(ev)
	return s.Adapter_RunPhaseServer.Send(ev)
}

// lyingDriver is a Driver talking to a liar over go-plugin's in-memory gRPC
// connection.
func lyingDriver(t *testing.T, lie func(ev *pluginv1.PhaseEvent)) *Driver {
	t.Helper()
	d := connectedTo(t, liar{sdk.NewServer(fake{}), lie})
	if err := d.Open(context.Background(), core.SystemConfig{Endpoint: "up"}); err != nil {
		t.Fatal(err)
	}
	return d
}

// interval returns ev's interval of index i, or nil.
func interval(ev *pluginv1.PhaseEvent, i int64) *pluginv1.Interval {
	if iv := ev.GetInterval(); iv != nil && iv.GetIndex() == i && len(iv.GetOps()) > 0 {
		return iv
	}
	return nil
}

// Issue 43, bug 3: a plugin's numbers were taken unchecked: negative counts gave
// "-1,007 ops ok (-24,079 ops/s)" and an archive that failed verify; a p99 of
// 2^62 ns gave an "ok" phase. Every number is now checked where it arrives: the
// phase fails naming the plugin and what it sent, and nothing from the impossible
// interval on is passed to the archive.
func TestImpossibleNumbersFailThePhase(t *testing.T) {
	for _, tc := range []struct {
		name string
		lie  func(ev *pluginv1.PhaseEvent)
		want string
	}{
		{"negative count", func(ev *pluginv1.PhaseEvent) {
			if iv := interval(ev, 1); iv != nil {
				iv.Ops[0].Ok = -1007
			}
		}, "interval 1: GET: ok -1007 is negative"},
		{"a p99 beyond the histogram", func(ev *pluginv1.PhaseEvent) {
			if iv := interval(ev, 1); iv != nil {
				iv.Ops[0].Response.P99Ns = 1 << 62
			}
		}, "interval 1: GET: response time: p99 4611686018427387904 ns is outside the histogram's range"},
		{"a p99 its histogram does not hold", func(ev *pluginv1.PhaseEvent) {
			if iv := interval(ev, 1); iv != nil {
				l := iv.Ops[0].Response
				l.P99Ns, l.P999Ns, l.P9999Ns, l.MaxNs = l.MaxNs+1, l.MaxNs+1, l.MaxNs+1, l.MaxNs+1
			}
		}, "but its histogram says"},
		{"a histogram of other operations", func(ev *pluginv1.PhaseEvent) {
			if iv := interval(ev, 1); iv != nil {
				iv.Ops[0].Ok++
				iv.Ops[0].Hits++
			}
		}, "response time: count"},
		{"totals that are not the intervals' sums", func(ev *pluginv1.PhaseEvent) {
			if end := ev.GetEnd(); end != nil && len(end.Totals) > 0 {
				end.Totals[0].Errors[core.ErrClassTimeout] += 5
			}
		}, "but its intervals sum to"},
		{"an unknown status", func(ev *pluginv1.PhaseEvent) {
			if end := ev.GetEnd(); end != nil {
				end.Status = "splendid"
			}
		}, `status "splendid"`},
		{"a stall longer than the phase", func(ev *pluginv1.PhaseEvent) {
			if end := ev.GetEnd(); end != nil {
				end.StalledNs = end.ElapsedNs + 1
			}
		}, "stalled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := lyingDriver(t, tc.lie)
			var got []core.IntervalReport
			spec := getSpec
			spec.Duration = 1500 * time.Millisecond
			end, err := d.RunPhase(context.Background(), spec, func(r core.IntervalReport) { got = append(got, r) })
			if err == nil || end.Status != core.StatusFailed || !strings.Contains(end.Error, "plugin fake sent numbers no measurement gives") ||
				!strings.Contains(end.Error, tc.want) {
				t.Fatalf("end %s %q, err %v; want failed, naming the plugin and %q", end.Status, end.Error, err, tc.want)
			}
			for _, r := range got {
				if err := r.Check(); err != nil {
					t.Errorf("an impossible interval was passed on: %v", err)
				}
			}
		})
	}
}

// The checks refuse nothing an engine measures: a real phase through the
// boundary ends ok.
func TestTrueNumbersPass(t *testing.T) {
	d := lyingDriver(t, func(*pluginv1.PhaseEvent) {})
	for _, spec := range []core.PhaseSpec{getSpec, func() core.PhaseSpec { s := getSpec; s.Rate = 2000; return s }()} {
		n := 0
		end, err := d.RunPhase(context.Background(), spec, func(core.IntervalReport) { n++ })
		if err != nil || end.Status != core.StatusOK || n == 0 {
			t.Fatalf("rate %g: end %s %q, err %v, %d intervals", spec.Rate, end.Status, end.Error, err, n)
		}
	}
}
