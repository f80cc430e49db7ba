package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/decide/input"
)

func parseNow(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid --now %q: use an RFC 3339 time such as 2026-11-20T12:00:00Z", s)
	}
	return t.UTC(), nil
}

// decisionFlags are the manager's settings that change a decision, for the commands that
// decide without it (eval, explain).
type decisionFlags struct {
	globalNS    string
	now         string
	defaultMode string
}

func (f *decisionFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.globalNS, "global-catalog-namespace", input.DefaultGlobalCatalogNamespace, "namespace whose CatalogSources every Subscription can use, as the manager's flag")
	cmd.Flags().StringVar(&f.now, "now", "", "evaluate as if at this RFC 3339 time, e.g. 2026-11-20T12:00:00Z (default: the current time)")
	cmd.Flags().StringVar(&f.defaultMode, "default-mode", string(tollgatev1alpha1.DefaultMode), "mode of gates whose spec.mode is empty, as the manager's flag: Enforce or Audit (Audit never approves)")
}

// parse checks the flags and returns the clock and the input configuration.
func (f *decisionFlags) parse() (time.Time, input.Config, error) {
	now, err := parseNow(f.now)
	if err != nil {
		return time.Time{}, input.Config{}, err
	}
	mode, err := tollgatev1alpha1.ParseMode(f.defaultMode)
	if err != nil {
		return time.Time{}, input.Config{}, fmt.Errorf("invalid --default-mode %w", err)
	}
	return now, input.Config{GlobalCatalogNamespace: f.globalNS, DefaultMode: mode}, nil
}
