package transport

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExecOffers(t *testing.T) {
	all := ExecProtocols
	tests := []struct {
		transport Transport
		pin       string
		want      []Offer
		wantErr   string
	}{
		{Auto, "", []Offer{{WebSocket, []string{ExecProtocolV5}}, {SPDY, all}, {WebSocket, []string{ExecProtocolV4}}}, ""},
		{WebSocket, "", []Offer{{WebSocket, []string{ExecProtocolV5}}, {WebSocket, []string{ExecProtocolV4}}}, ""},
		{SPDY, "", []Offer{{SPDY, all}}, ""},
		{Auto, "v4", []Offer{{WebSocket, []string{ExecProtocolV4}}, {SPDY, []string{ExecProtocolV4}}}, ""},
		{Auto, "v2.channel.k8s.io", []Offer{{SPDY, []string{ExecProtocolV2}}}, ""},
		{SPDY, "v1", []Offer{{SPDY, []string{ExecProtocolV1}}}, ""},
		{WebSocket, "v1", []Offer{{WebSocket, []string{ExecProtocolV1}}}, ""},
		{Auto, "channel.k8s.io", []Offer{{WebSocket, []string{ExecProtocolV1}}, {SPDY, []string{ExecProtocolV1}}}, ""},
		{WebSocket, "v5", []Offer{{WebSocket, []string{ExecProtocolV5}}}, ""},
		{WebSocket, "v3", nil, "carries only"},
		{Auto, "v9", nil, "unknown exec/attach protocol"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.transport, tt.pin), func(t *testing.T) {
			got, err := ExecOffers(tt.transport, tt.pin)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("offers (-want +got):\n%s", diff)
			}
		})
	}
	if s := (Offer{SPDY, all}).String(); s != "SPDY v5..v1" {
		t.Errorf("String = %q", s)
	}
}

func TestExitCodeFromText(t *testing.T) {
	for text, want := range map[string]int{
		"command terminated with non-zero exit code: exit status 7":                              7,
		"command terminated with exit code 3":                                                    3,
		`command terminated with non-zero exit code: command ["sh" "-c" "exit 7"] exited with 7`: 7,
		"error executing command [sh -c exit 9], exit code 9":                                    9,
		"Internal error occurred: executable file not found":                                     1,
		"exit status 300": 1,
	} {
		if got := ExitCodeFromText(text); got != want {
			t.Errorf("ExitCodeFromText(%q) = %d, want %d", text, got, want)
		}
	}
}
