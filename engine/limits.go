package engine

import (
	"fmt"

	tollgatev1alpha1 "github.com/tollgate-dev/tollgate/apis/tollgate/v1alpha1"
)

// MaxOperands is the most operands (input.operands) one evaluation judges; input.MaxOperands
// is the same number. Evaluating 5,000 operands takes about a second on a busy two-core node
// and allocates about 8 KiB per operand, so far more would miss the deadline (DefaultTimeout)
// every time, after spending it. A document that lists more is a PolicyError at once, before
// it is converted: the health of a partial view could leave a degraded operand out, so nothing
// is approved (fail closed), and the denial says why and what to do.
const MaxOperands = 10000

// tooLarge is the fail-closed result for an input that lists more than MaxOperands operands;
// nil when it does not.
func tooLarge(revision string, input map[string]any) *Result {
	operands, _ := input["operands"].([]any)
	if len(operands) <= MaxOperands {
		return nil
	}
	r := policyError(revision, fmt.Errorf("%w: it lists more than %d operands (instances of the CRDs the installed operator owns, in its target namespaces), the most an evaluation judges", ErrInputTooLarge, MaxOperands))
	d := &r.Decision.Denials[0]
	d.Facts = []string{
		fmt.Sprintf("the operator has more than %d operands: their health is not judged on a part of them, which could leave a degraded one out, so nothing is approved (fail closed)", MaxOperands),
	}
	d.Lift = []Remedy{{
		Text: fmt.Sprintf("delete the operands no longer needed, to %d or fewer; or approve the InstallPlan by hand, after checking the operands' health yourself (%s cannot be overridden)", MaxOperands, tollgatev1alpha1.CodePolicyError),
	}}
	return r
}
