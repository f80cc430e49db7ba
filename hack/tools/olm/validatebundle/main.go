// Command validatebundle runs operator-framework/api's validators on an OLM bundle directory
// (manifests/ and metadata/), as `operator-sdk bundle validate` does: the default bundle
// validators (CSV, CRDs, the bundle as a whole) and the object, good-practice and
// deprecated-API checks. (The multi-architecture check is left out: it pulls the operator's
// image with docker.) It prints every finding and exits 1 on an error, or on a warning with
// -fail-on-warning.
//
//	validatebundle -k8s-version 1.34 bundles/olm
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
)

func main() {
	k8sVersion := flag.String("k8s-version", "", "the Kubernetes version whose removed APIs are errors (the deprecated-API validator's k8s-version)")
	failOnWarning := flag.Bool("fail-on-warning", false, "exit 1 on a warning too")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: validatebundle [-k8s-version V] [-fail-on-warning] BUNDLE_DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "load bundle %s: %v\n", dir, err)
		os.Exit(1)
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.ObjectValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
	)
	objs := bundle.ObjectsToValidate()
	if *k8sVersion != "" {
		objs = append(objs, map[string]string{"k8s-version": *k8sVersion})
	}
	failed := false
	for _, result := range validators.Validate(objs...) {
		for _, e := range result.Errors {
			fmt.Printf("%s: %s\n", result.Name, e.Error())
			failed = true
		}
		for _, w := range result.Warnings {
			fmt.Printf("%s: %s\n", result.Name, w.Error())
			failed = failed || *failOnWarning
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("%s: bundle %s passes\n", dir, bundle.Name)
}
