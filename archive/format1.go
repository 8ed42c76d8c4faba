package archive

import (
	"encoding/json"
	"fmt"

	"github.com/cmpbench/cmpbench/core"
)

// Format version 1 wrote the two methods it had as fields of a phase of their
// own: a fixed-rate ladder's step as "ladder" (the phase as written) and
// "ladder_combine", a concurrency sweep's as "sweep", "sweep_gain" and
// "sweep_p99_bound_ns", and a phase run at a sweep's knee as "knee_of". This
// file is the one reader of them: it turns them into version 2's Method and
// Uses, with the parameters the methods write (methods/ladder, methods/sweep).
var format1Keys = []string{"ladder", "ladder_combine", "sweep", "sweep_gain", "sweep_p99_bound_ns", "knee_of"}

// Its keys are no workload kind's: "ladder" and "sweep" are the methods' names,
// which no workload may take (core.RegisterWorkload), the others reserved here.
func init() {
	core.ReserveWorkloadNames("a version 1 archive's phase", "ladder_combine", "sweep_gain", "sweep_p99_bound_ns", "knee_of")
}

// readFormat1 sets Method and Uses from a version 1 phase's fields, and takes
// them out of raw; a phase of version 2 has none.
func (p *PhaseInfo) readFormat1(raw map[string]json.RawMessage) error {
	var v1 struct {
		Ladder          string  `json:"ladder"`
		LadderCombine   string  `json:"ladder_combine"`
		Sweep           string  `json:"sweep"`
		SweepGain       float64 `json:"sweep_gain"`
		SweepP99BoundNs int64   `json:"sweep_p99_bound_ns"`
		KneeOf          string  `json:"knee_of"`
	}
	old := map[string]json.RawMessage{}
	for _, k := range format1Keys {
		if v, ok := raw[k]; ok {
			old[k] = v
			delete(raw, k)
		}
	}
	if len(old) == 0 {
		return nil
	}
	b, _ := json.Marshal(old)
	if err := json.Unmarshal(b, &v1); err != nil {
		return fmt.Errorf("version 1 method fields: %w", err)
	}
	var params any
	switch {
	case v1.Ladder != "":
		params = struct {
			Combine string `json:"combine,omitempty"`
		}{v1.LadderCombine}
		p.Method = &core.MethodStep{Kind: "ladder", Of: v1.Ladder}
	case v1.Sweep != "":
		params = struct {
			Gain       float64 `json:"gain"`
			P99BoundNs int64   `json:"p99_bound_ns,omitempty"`
		}{v1.SweepGain, v1.SweepP99BoundNs}
		p.Method = &core.MethodStep{Kind: "sweep", Of: v1.Sweep}
	}
	if p.Method != nil {
		p.Method.Params, _ = json.Marshal(params)
	}
	if v1.KneeOf != "" {
		p.Uses = &core.MethodRef{Kind: "sweep", Of: v1.KneeOf}
	}
	return nil
}
