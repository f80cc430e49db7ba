package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// FuzzDecodeResult feeds arbitrary JSON, as a policy's result value, to the result decoder
// and the decision's finishing (decodeResult, finishDecision), as Evaluate does after the
// query. Seeds are in testdata/fuzz/FuzzDecodeResult. Beyond "no panic", it checks what the
// engine promises whatever a policy returns: a value of the wrong shape is an ErrResultShape;
// otherwise the decision is allowed only when the policy said allowed: true and no denial
// stands, no PolicyError is allowed, PolicyError and InstallPlanIncludesBlockedOperator are
// never overridden, standing denials come first, at most MaxDenials are kept (Truncated
// counts the rest), and every text fits MaxText.
func FuzzDecodeResult(f *testing.F) {
	e := &Engine{rules: ruleIndex{
		"OperatorNotUpgradeable": {{File: "upgrade/upgrade.rego", Row: 1, Package: "tollgate.upgrade", Rule: "deny", Title: "t"}},
	}}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // as ast.JSONWithOpt gives numbers
		var v any
		if err := dec.Decode(&v); err != nil {
			return
		}
		w, err := decodeResult(v)
		sameAsFromAST(t, v, w, err)
		if err != nil {
			if !errors.Is(err, ErrResultShape) {
				t.Fatalf("a decode error that is not ErrResultShape: %v", err)
			}
			return
		}
		said := w.Decision.Allowed
		in := len(w.Decision.Denials)
		r := e.finishDecision(w)
		d := r.Decision
		if d.Allowed && !said {
			t.Fatalf("allowed although the policy said allowed: false")
		}
		if d.Allowed && d.BlockedBy() != "" {
			t.Fatalf("allowed with a standing denial %s", d.BlockedBy())
		}
		if len(d.Denials) > MaxDenials || d.Truncated != max(0, in-MaxDenials) || len(d.Denials)+d.Truncated != in {
			t.Fatalf("%d denials in, %d kept, %d truncated", in, len(d.Denials), d.Truncated)
		}
		if len(r.rules) != len(d.Denials) {
			t.Fatalf("%d rules for %d denials", len(r.rules), len(d.Denials))
		}
		seenOverridden := false
		for _, den := range d.Denials {
			switch den.Code {
			case tollgatev1alpha1.CodePolicyError:
				if d.Allowed {
					t.Fatalf("allowed with a PolicyError denial")
				}
				fallthrough
			case tollgatev1alpha1.CodeInstallPlanIncludesBlockedOperator:
				if den.Overridden {
					t.Fatalf("%s marked overridden", den.Code)
				}
			}
			if den.Code == "" {
				t.Fatalf("a denial without a code")
			}
			if seenOverridden && !den.Overridden {
				t.Fatalf("a standing denial after an overridden one")
			}
			seenOverridden = seenOverridden || den.Overridden
			texts := slices.Concat([]string{den.Message, den.OverrideReason, den.Source}, den.Facts)
			for _, l := range den.Lift {
				texts = append(texts, l.Text, l.Command, l.Override)
			}
			for _, s := range texts {
				if len(s) > MaxText {
					t.Fatalf("a text of %d bytes, more than MaxText", len(s))
				}
			}
			if len(den.Facts) > maxFacts || len(den.Lift) > maxLift {
				t.Fatalf("%d facts and %d remedies", len(den.Facts), len(den.Lift))
			}
		}
		for _, c := range slices.Concat(r.Conditions, r.Health) {
			if len(c.Message) > MaxText {
				t.Fatalf("a condition message of %d bytes", len(c.Message))
			}
		}
	})
}

// sameAsFromAST checks that decoding the value as Evaluate has it (an ast value, written as JSON
// by boundedJSON) gives what decoding the JSON data gives.
func sameAsFromAST(t *testing.T, v any, want *wireResult, wantErr error) {
	t.Helper()
	value, err := ast.InterfaceToValue(v)
	if err != nil {
		t.Fatalf("ast.InterfaceToValue: %v", err)
	}
	enc, err := boundedJSON(ast.NewTerm(value), nil)
	if err != nil {
		t.Fatalf("boundedJSON: %v", err)
	}
	got, gotErr := decodeResult(enc)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("decoding the ast value: error %v, want %v", gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoding the ast value: %+v, want %+v", got, want)
	}
}
