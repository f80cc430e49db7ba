// Package statusreport summarises what Tollgate holds, from what the manager recorded: the
// UpgradeGates by state and by denial code, the upgrades held longest, the InstallPlans
// pending and awaiting approval, the policy revision in force and the health of every policy
// ConfigMap. Nothing is evaluated again: the report reads the gates' status and the policy
// ConfigMaps' status annotation over any client.Reader (the live cluster or a snapshot).
//
// `tollgate status` prints a Report; its JSON form is that command's -o json.
package statusreport
