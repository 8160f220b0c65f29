package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type infoOptions struct {
	f *factory
}

type infoCondition struct {
	Type    string `json:"type"`
	Status  bool   `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

type infoReport struct {
	Endpoint   string            `json:"endpoint"`
	Conditions []infoCondition   `json:"conditions"`
	Info       map[string]string `json:"info,omitempty"`
}

func newInfoCommand(f *factory) *cobra.Command {
	o := &infoOptions{f: f}
	return &cobra.Command{
		Use:   "info",
		Short: "Show the runtime's status and conditions",
		Example: `  crisp info
  crisp info -o json`,
		Long: `Show the runtime's status conditions (RuntimeReady, NetworkReady) and, with
-o json or yaml, the runtime's verbose info.

EXIT STATUS
  0  the runtime answered
  1  the runtime could not be reached or failed
  2  bad flags or arguments`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
}

func (o *infoOptions) Run(ctx context.Context) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	verbose := o.f.Global.Output != "table"
	var resp *runtimeapi.StatusResponse
	err = c.Call(ctx, "status", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.Status(ctx, &runtimeapi.StatusRequest{Verbose: verbose})
		return err
	})
	if err != nil {
		return err
	}
	report := infoReport{Endpoint: c.Endpoint, Info: resp.Info}
	for _, cond := range resp.GetStatus().GetConditions() {
		report.Conditions = append(report.Conditions, infoCondition{
			Type: cond.Type, Status: cond.Status, Reason: cond.Reason, Message: cond.Message,
		})
	}
	return printData(o.f.Streams.Out, o.f.Global.Output, report, func(w io.Writer) error {
		row(w, "CONDITION", "STATUS", "REASON", "MESSAGE")
		for _, cond := range report.Conditions {
			row(w, cond.Type, cond.Status, cond.Reason, cond.Message)
		}
		return nil
	})
}
