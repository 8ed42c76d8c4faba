package main

import (
	"fmt"
	"io"

	"github.com/cmpbench/cmpbench/core/plan"
)

// printEstimates prints, after a dry run's plan, each system's estimate and what
// the figures count.
func printEstimates(w io.Writer, es []plan.Estimate) {
	fmt.Fprintln(w, "\nEstimate per system:")
	for _, e := range es {
		fmt.Fprintf(w, "  %s: %s\n", e.System, e)
	}
	fmt.Fprintln(w, "How the estimate counts:")
	for _, n := range plan.EstimateNotes() {
		fmt.Fprintf(w, "  %s\n", n)
	}
}
