package manager

import (
	"net/url"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/spf13/pflag"

	"github.com/tollgate-dev/tollgate/internal/decide/decisionlog"
)

// decisionLogFlags are the decision log settings.
type decisionLogFlags struct {
	target         string
	input          bool
	uploadInterval time.Duration
	bufferEvents   int
}

func (f *decisionLogFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.target, "decision-log", "", "log every changed decision and every InstallPlan approval as one JSON line in OPA's decision log format: stdout, a file (appended to), or an http(s) URL to POST gzip-compressed batches to as OPA's decision log plugin does (a URL without a path posts to /logs)")
	fs.BoolVar(&f.input, "decision-log-input", true, "include each decision's input document in the decision log; false logs only its digest (input_digest), and 'eval --replay' cannot replay those events")
	fs.DurationVar(&f.uploadInterval, "decision-log-upload-interval", decisionlog.DefaultUploadInterval, "how often an http(s) --decision-log uploads pending events (at once when a batch is full)")
	fs.IntVar(&f.bufferEvents, "decision-log-buffer-events", decisionlog.DefaultBufferEvents, "events an http(s) --decision-log holds while uploads fail; beyond it the oldest are dropped (tollgate_decision_log_dropped_total)")
}

// open returns the logger, or nil without --decision-log. locations are the --bundle values,
// in the order of what bundles returns.
func (f *decisionLogFlags) open(locations []string, bundles func() []*bundle.Bundle) (*decisionlog.Logger, error) {
	if f.target == "" {
		return nil, nil
	}
	sink, err := decisionlog.Open(f.target, decisionlog.HTTPOptions{Interval: f.uploadInterval, BufferEvents: f.bufferEvents})
	if err != nil {
		return nil, err
	}
	opts := decisionlog.Options{OmitInput: !f.input}
	if bundles != nil {
		opts.Bundles = func() map[string]string { return bundleRevisions(locations, bundles()) }
	}
	return decisionlog.New(sink, opts), nil
}

// bundleRevisions names each bundle by its location (an URL without user info or query) and
// gives its manifest revision.
func bundleRevisions(locations []string, bundles []*bundle.Bundle) map[string]string {
	out := make(map[string]string, len(bundles))
	for i, b := range bundles {
		if b == nil || i >= len(locations) {
			continue
		}
		name := locations[i]
		if u, err := url.Parse(name); err == nil && u.Host != "" {
			u.User, u.RawQuery, u.Fragment = nil, "", ""
			name = u.String()
		}
		out[name] = b.Manifest.Revision
	}
	return out
}
