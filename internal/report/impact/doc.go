// Package impact compares the decisions of two policy sets on the same state: which
// Subscriptions a candidate newly blocks, newly allows or holds by other codes, and which
// InstallPlans' verdicts change. `tollgate policy diff` prints its Report (the JSON contract;
// Report.WriteTable, the table).
package impact
