package main

import (
	"context"

	"github.com/tollgate-dev/tollgate/controllers"
)

// bundlePollInterval is how often `tollgate run` re-reads its --bundle locations.
var bundlePollInterval = controllers.DefaultBundlePollInterval

// loadBundles reads the --bundle locations (directories, .tar.gz files, bundle server URLs) and
// keeps them current until ctx ends. Any location that does not load is an error: the manager
// does not start without the admin's policy.
func loadBundles(ctx context.Context, locations []string) (*controllers.BundleSource, error) {
	return controllers.LoadBundles(ctx, locations, controllers.BundleOptions{PollInterval: bundlePollInterval})
}

// loadBundlesOnce reads the --bundle locations once, for commands that answer and exit
// (eval, explain): no pollers are started.
func loadBundlesOnce(ctx context.Context, locations []string) (*controllers.BundleSource, error) {
	return controllers.LoadBundles(ctx, locations, controllers.BundleOptions{Once: true})
}
