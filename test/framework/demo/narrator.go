package demo

import (
	"fmt"
	"io"
	"time"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// narrator prints numbered steps and how long the story has been running.
type narrator struct {
	w     io.Writer
	n     int
	start time.Time
}

func (n *narrator) step(format string, args ...any) {
	n.n++
	fmt.Fprintf(n.w, "\n== Step %d: %s  [%.1fs]\n", n.n, fmt.Sprintf(format, args...), time.Since(n.start).Seconds())
}

func (n *narrator) say(format string, args ...any) {
	fmt.Fprintf(n.w, "   "+format+"\n", args...)
}

// gateLine is a gate's status in one line, as `kubectl get upgradegate` shows it.
func gateLine(g *tollgatev1alpha1.UpgradeGate) string {
	s := g.Status
	decision := "allowed"
	if !s.Decision.Allowed {
		decision = "held by " + orDefault(s.Decision.BlockedBy, "a denial")
	}
	return fmt.Sprintf("installed %s, current %s, state %s, %s", s.InstalledCSV, s.CurrentCSV, orDefault(s.State, "-"), decision)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// indented prefixes every line written through it.
type indented struct {
	w       io.Writer
	prefix  string
	midLine bool
}

func (p *indented) Write(b []byte) (int, error) {
	var buf []byte
	for _, c := range b {
		if !p.midLine {
			buf = append(buf, p.prefix...)
		}
		buf = append(buf, c)
		p.midLine = c != '\n'
	}
	if _, err := p.w.Write(buf); err != nil {
		return 0, err
	}
	return len(b), nil
}
