package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// validationUnit checks what a load with validate: true wrote (unit): the keys
// counted against the records the whole load wrote (on every shard), and a
// sample of records read back. A validation that fails halts the system's run:
// its later phases would read data that is not what was loaded. It runs where
// the coordinator says the whole data set is checked (shard 0, after every
// shard wrote); a load that failed is recorded as not validated, saying why.
type validationUnit struct{ r *systemRunner }

func (validationUnit) before(context.Context, *plan.Step) core.Verdict { return core.Verdict{} }

func (u validationUnit) after(ctx context.Context, st plan.Step, p *core.PhaseRun, whole stepResult) core.Verdict {
	r := u.r
	if !st.Checks.Validate || !r.coord.checks() {
		return core.Verdict{}
	}
	switch {
	case loadFailed(whole):
		why := "not validated: the load failed: " + p.End.Error
		if whole.where != "" {
			why = "not validated: the load failed" + whole.where
		}
		r.addValidation(core.Validation{System: r.info.Name, Point: "after load", Expected: r.loaded, Counted: -1, Problems: []string{why}})
	case whole.Status == core.StatusOK:
		if v := r.validate(ctx, st, r.loaded, "after load"); !v.OK() {
			return core.Verdict{Act: core.Halt, Rest: "validation failed: " + v.Problems[0]}
		}
	}
	return core.Verdict{}
}

// validate asks the plugin to check a load and records the result.
func (r *systemRunner) validate(ctx context.Context, st plan.Step, expected int64, point string) core.Validation {
	vctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var v core.Validation
	err := r.waitFor(vctx, "check the load (Validate: counting keys, reading samples)", func() (err error) {
		v, err = r.drv.Validate(vctx, st.Spec, expected)
		return err
	})
	if err != nil {
		v = core.Validation{Expected: expected, Counted: -1, Problems: []string{"validate: " + r.cfg.Redactor.String(err.Error())}}
	}
	v.System, v.Point = r.info.Name, point
	r.addValidation(v)
	status := "ok"
	if !v.OK() {
		status = v.Problems[0]
	}
	r.cfg.Observer.Note(fmt.Sprintf("%s: validation %s: %d keys counted, %d expected, %d sample records checked: %s", r.info.Name, point, v.Counted, expected, len(v.Samples), status))
	return v
}

func (r *systemRunner) addValidation(v core.Validation) {
	r.res.Validations = append(r.res.Validations, v)
	r.sinkFailed(r.cfg.Sink.Validation(v))
}

func (r *systemRunner) lastValidation() core.Validation {
	return r.res.Validations[len(r.res.Validations)-1]
}

// amendValidation changes the last validation; the sink gets the amended one as a
// correction of the last.
func (r *systemRunner) amendValidation(f func(*core.Validation)) {
	v := &r.res.Validations[len(r.res.Validations)-1]
	f(v)
	r.sinkFailed(r.cfg.Sink.AmendValidation(*v))
}
