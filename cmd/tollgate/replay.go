package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
	"github.com/tollgate-dev/tollgate/internal/report/replay"
)

// runReplay re-evaluates the decisions of a decision log with the policies of the flags.
func runReplay(ctx context.Context, stdout io.Writer, f evalFlags) error {
	if err := f.output.Validate(); err != nil {
		return err
	}
	if f.output.Format() == "name" {
		return printers.ErrNoNames
	}
	if len(f.snapshot) > 0 {
		return errors.New("--replay re-evaluates logged inputs: it takes no --snapshot")
	}
	logged, err := decisionlog.ReadFile(f.replay)
	if err != nil {
		return fmt.Errorf("--replay %s: %w", f.replay, err)
	}
	// No cluster: the embedded policies with --bundle and --policy-dir, no ConfigMaps.
	eng, err := f.policy.sources().Offline(ctx)
	if err != nil {
		return err
	}
	report := replay.Replay(ctx, eng, logged)
	if err := f.output.Print(stdout, printers.Printable{Doc: report, Human: report.WriteTable}); err != nil {
		return err
	}
	if differences := report.Differences(); len(differences) > 0 {
		return &exitError{code: exitDenied, err: errors.New(strings.Join(differences, "; "))}
	}
	return nil
}
