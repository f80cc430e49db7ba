package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/decisionlog"
	"github.com/tollgate-dev/tollgate/decisionlog/replay"
	"github.com/tollgate-dev/tollgate/engine"
	"github.com/tollgate-dev/tollgate/policyset"
	"github.com/tollgate-dev/tollgate/printers"
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
	logged, err := readDecisionLog(f.replay)
	if err != nil {
		return err
	}
	eng, err := replayEngine(ctx, f.policy)
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

// readDecisionLog reads the log --replay names; "-" is standard input.
func readDecisionLog(path string) ([]decisionlog.Logged, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--replay: %w", err)
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	logged, err := decisionlog.Read(r)
	if err != nil {
		return nil, fmt.Errorf("--replay %s: %w", path, err)
	}
	return logged, nil
}

// replayEngine is the embedded policies with --bundle and --policy-dir: without a cluster,
// the policy ConfigMaps are not read.
func replayEngine(ctx context.Context, pf policyFlags) (*engine.Engine, error) {
	base, local, err := pf.sources().Base(ctx)
	if err != nil {
		return nil, err
	}
	base.Modules = append(slices.Clone(base.Modules), local...)
	return policyset.Compile(ctx, base)
}
