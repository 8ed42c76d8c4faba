package main

import (
	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/plugins/sdk"
)

// newPluginCmd is the hidden `plugin serve <adapter>`: the cmpbench binary serving one
// of its built-in adapters over the same protocol a third-party plugin speaks.
func newPluginCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "plugin", Hidden: true}
	cmd.AddCommand(&cobra.Command{
		Use:  "serve ADAPTER",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			a, ok := core.BuiltinAdapter(args[0])
			if !ok {
				return inputErr("no built-in adapter %q", args[0])
			}
			sdk.Serve(a)
			return nil
		},
	})
	return cmd
}
