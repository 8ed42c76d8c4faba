package core

// Step is one phase of one system in a run's plan.
type Step struct {
	System     string
	Index      int // position of the phase in the suite
	Repetition int // 0-based; measured phases run Repeat times
	Spec       PhaseSpec
	Checks     Checks
	// Method is the method the phase is a step of (its kind, the phase as
	// written, its parameters); zero for a phase that is not a step.
	Method MethodStep
	// Uses names the phase whose result gives this one its connections (a
	// sweep's knee: connections: knee); its method's unit sets them.
	Uses MethodRef
}

// Checks follow a load phase: Validate compares the server's record count with the
// successful inserts and checks sample records; Restart then stops a provisioned
// system cleanly, starts it on the same data and validates again.
type Checks struct {
	Validate, Restart bool
}
