package printers_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/cli/printers"
)

type itemsReport struct {
	Items []string `json:"items"`
}

// command is a command with the print flags, parsed from args; it prints a report of two
// tables.
func command(t *testing.T, f *printers.PrintFlags, args ...string) *cobra.Command {
	t.Helper()
	root := &cobra.Command{Use: "tollgate"}
	cmd := &cobra.Command{Use: "report"}
	root.AddCommand(cmd)
	f.AddFlags(cmd)
	require.NoError(t, cmd.ParseFlags(args))
	return cmd
}

func printable() printers.Printable {
	r := itemsReport{Items: []string{"a", "b"}}
	return printers.Printable{
		Doc: r,
		Human: func(w io.Writer, o printers.TableOptions) error {
			for _, table := range []string{"first", "second"} {
				if o.Shows(table) {
					o.Title(w, "%s%s\n", o.Gap(), table)
					fmt.Fprintf(w, "%s-row\n", table)
				}
			}
			return nil
		},
		Names: func() []printers.Ref {
			return []printers.Ref{{GroupKind: schema.GroupKind{Group: "operators.coreos.com", Kind: "Subscription"}, Name: "etcd"}}
		},
	}
}

func TestPrintFlagsPrintEachFormat(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "\nfirst\nfirst-row\n\nsecond\nsecond-row\n"},
		{[]string{"--only", "second"}, "second\nsecond-row\n"},
		{[]string{"--only", "first", "--no-headers"}, "first-row\n"},
		{[]string{"-o", "yaml"}, "items:\n- a\n- b\n"},
		{[]string{"-o", "jsonpath={.items[1]}"}, "b"},
		{[]string{"--template", "{{len .items}}"}, "2"},
		{[]string{"-o", "name"}, "subscription.operators.coreos.com/etcd\n"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			f := printers.NewPrintFlags("table", "wide", "json", "yaml", "name").WithTables("first", "second")
			command(t, f, tt.args...)
			require.NoError(t, f.Validate())
			var out bytes.Buffer
			require.NoError(t, f.Print(&out, printable()))
			assert.Equal(t, tt.want, out.String())
		})
	}
}

func TestPrintFlagsRefuseBeforeAnythingIsRead(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "csv"}, `unknown output format -o "csv": use one of table, wide, json, yaml, name, jsonpath=TEMPLATE or go-template=TEMPLATE`},
		{[]string{"-o", "jsonpath={.items["}, "unterminated array"},
		{[]string{"--no-headers"}, "--no-headers prints rows only, and report prints two tables with different columns: pick one with --only first|second"},
		{[]string{"--only", "third"}, `unknown --only "third": use one of first, second`},
		{[]string{"--only", "first", "-o", "yaml"}, "--only picks a table of -o table or -o wide, not of -o yaml"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			f := printers.NewPrintFlags("table", "wide", "json", "yaml", "name").WithTables("first", "second")
			command(t, f, tt.args...)
			err := f.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestPrintFlagsWithoutTables(t *testing.T) {
	f := printers.NewPrintFlags("text", "json")
	cmd := command(t, f)
	assert.Nil(t, cmd.Flags().Lookup("no-headers"), "a text report has no headers to leave out")
	assert.Nil(t, cmd.Flags().Lookup("only"))
	require.NoError(t, f.Validate())
	var out bytes.Buffer
	require.NoError(t, f.Print(&out, printers.Printable{Doc: itemsReport{}, Human: func(w io.Writer, o printers.TableOptions) error {
		assert.Equal(t, printers.TableOptions{}, o)
		_, err := io.WriteString(w, "text")
		return err
	}}))
	assert.Equal(t, "text", out.String())

	// A command whose output turns out to be one table (eval --replay) drops its table names.
	f = printers.NewPrintFlags("table", "wide", "json").WithTables("first", "second")
	command(t, f, "--only", "first")
	f.WithTables()
	assert.EqualError(t, f.Validate(), "--only picks one of several tables, and report prints one: leave --only out")

	f = printers.NewPrintFlags("text", "json")
	command(t, f, "-o", "name")
	require.Error(t, f.Validate(), "name is not one of this command's formats")
}
