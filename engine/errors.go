package engine

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrCompile: the candidate policy set does not compile; the error is a *CompileError.
	ErrCompile = errors.New("policy does not compile")
	// ErrEvaluation: the policy raised an error while evaluating (a conflict, a built-in error…).
	ErrEvaluation = errors.New("policy evaluation failed")
	// ErrDeadline: evaluation did not finish within Options.Timeout or the caller's context.
	ErrDeadline = errors.New("policy evaluation exceeded its deadline")
	// ErrUndefined: data.tollgate.main.result is undefined for the input.
	ErrUndefined = errors.New("policy result is undefined")
	// ErrResultShape: the result does not have the shape policies/README.md documents.
	ErrResultShape = errors.New("policy result has the wrong shape")
	// ErrInput: the input document cannot be converted to a Rego value.
	ErrInput = errors.New("input document is not valid JSON data")
	// ErrInputTooLarge: the input document lists more than the engine evaluates (MaxOperands).
	ErrInputTooLarge = errors.New("input document is too large to evaluate")
	// ErrInputShape: a key of the input document holds a value of another type than input
	// document version 1 gives it (a string where a list belongs).
	ErrInputShape = errors.New("input document has a value of the wrong type")
)

// CompileErrorItem is one problem in one module, as a person would look for it.
type CompileErrorItem struct {
	File    string `json:"file"`
	Row     int    `json:"row"`
	Col     int    `json:"col"`
	Message string `json:"message"`
}

func (i CompileErrorItem) String() string {
	if i.File == "" {
		return i.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", i.File, i.Row, i.Col, i.Message)
}

// CompileError lists every problem found while parsing and compiling a candidate policy set.
// errors.Is(err, ErrCompile) holds for it.
type CompileError struct {
	Items []CompileErrorItem
}

func (e *CompileError) Error() string {
	lines := make([]string, 0, len(e.Items))
	for _, it := range e.Items {
		lines = append(lines, it.String())
	}
	return fmt.Sprintf("%s: %d error(s): %s", ErrCompile, len(e.Items), strings.Join(lines, "; "))
}

// Is makes errors.Is(err, ErrCompile) true.
func (e *CompileError) Is(target error) bool { return target == ErrCompile }
