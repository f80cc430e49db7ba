// Package install checks what an admin applies: config/default builds into a manager that is
// probed, bounded, confined and reachable for metrics (and nothing more), and every PromQL
// expression of config/prometheus and config/grafana names only metrics Tollgate registers, so
// a renamed metric breaks this test rather than a dashboard or an alert.
package install
