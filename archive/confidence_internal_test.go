package archive

import "testing"

// A row's latencies get no interval where they do not mean what their column
// says: a fixed-rate phase not sustained (not sustained wins, as the report's
// NS does), or a client-lagged one.
func TestLatenciesUnsure(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name      string
		sustained *bool
		lagged    bool
		want      string
	}{
		{"closed loop", nil, false, ""},
		{"sustained", &yes, false, ""},
		{"not sustained", &no, false, "latencies: not sustained, so not of the rate asked"},
		{"client-lagged", &yes, true, "latencies: client-lagged, so of the client as much as the server"},
		{"both", &no, true, "latencies: not sustained, so not of the rate asked"},
	} {
		got := latenciesUnsure(&PhaseInfo{ClientLagged: tc.lagged}, &SummaryRow{Sustained: tc.sustained})
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
