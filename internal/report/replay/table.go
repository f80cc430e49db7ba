package replay

import (
	"fmt"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
	"github.com/tollgate-dev/tollgate/internal/text"
)

// WriteTable prints the report for a person: one row per event, then the counts.
func (r *Report) WriteTable(w io.Writer, o printers.TableOptions) error {
	// A decision log is input like any other: its names and reasons are escaped as printed.
	t := o.NewTable(w, "DECISION ID", "PATH", "SUBSCRIPTION", "LOGGED", "REPLAYED", "OUTCOME")
	for _, e := range r.Events {
		outcome := e.Outcome
		switch {
		case e.Reason != "" && e.Outcome == OutcomeNotReplayable:
			outcome += " (" + e.Reason + ")"
		case e.Outcome == OutcomeInputEdited:
			what, _, _ := strings.Cut(e.Reason, ":") // the digests are in -o json
			outcome += " (" + what + ")"
		}
		t.Row(e.DecisionID, e.Path, e.Namespace+"/"+e.Name, e.Logged.String(), e.Replayed.String(), outcome)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	edited := ""
	if r.InputEdited > 0 { // said only when there are any: the line is unchanged otherwise
		edited = fmt.Sprintf(", %d input edited", r.InputEdited)
	}
	o.Title(w, "\n%d events replayed with policy revision %s: %d same, %d different, %d not replayable%s\n",
		len(r.Events), text.Escape(r.PolicyRevision), r.Same, r.Different, r.NotReplayable, edited)
	return nil
}
