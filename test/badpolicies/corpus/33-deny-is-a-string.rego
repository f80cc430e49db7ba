# A deny that is a string, not a set of denials.
# expect-gate: package tollgate.bad defines deny as "hold everything", which is not a set of denials
package tollgate.bad

deny := "hold everything"
