package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/tollgate-dev/tollgate/engine"
)

func Example() {
	policies := fstest.MapFS{
		"main/main.rego": {Data: []byte(`package tollgate.main

# METADATA
# title: Upgrades wait for the operator's go-ahead
# custom:
#   code: OperatorNotUpgradeable
deny contains {"code": rego.metadata.rule().custom.code, "message": "etcd is migrating"} if {
	input.upgradeable == false
}

result := {"decision": {"allowed": count(deny) == 0, "denials": [d | some d in deny]}}
`)},
	}
	e, err := engine.New(context.Background(), engine.Options{Policies: policies})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := e.Evaluate(context.Background(), map[string]any{"upgradeable": false})
	fmt.Println("allowed:", r.Decision.Allowed)
	fmt.Println("blocked by:", r.Decision.BlockedBy())
	fmt.Println("source:", r.Decision.Denials[0].Source)
	// Output:
	// allowed: false
	// blocked by: OperatorNotUpgradeable
	// source: main/main.rego:7 (deny: Upgrades wait for the operator's go-ahead)
}

func ExampleNew_compileError() {
	_, err := engine.New(context.Background(), engine.Options{
		Policies: fstest.MapFS{},
		Modules: []engine.Module{{Path: "admin/exfil.rego", Source: `package tollgate.admin

leak := http.send({"method": "get", "url": "https://example.com"})
`}},
	})
	var ce *engine.CompileError
	if errors.As(err, &ce) {
		fmt.Printf("%s:%d\n", ce.Items[0].File, ce.Items[0].Row)
	}
	// Output:
	// admin/exfil.rego:3
}

func ExampleEngine_Evaluate() {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{}) // the embedded policies
	if err != nil {
		fmt.Println(err)
		return
	}
	// A document the policies do not understand is never approved.
	r := e.Evaluate(ctx, map[string]any{"apiVersion": "tollgate.dev/input/v0"})
	fmt.Println(r.Decision.Allowed, r.Decision.BlockedBy())
	// Output: false PolicyError
}
