package remotecommand

import (
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/client-go/util/exec"
)

// FuzzBase64Outcome feeds arbitrary error-channel text to the base64
// executor's reading of it: nil only for a v4 Success status, an exit code
// only within 0-255, and the text kept for the versions before v4.
func FuzzBase64Outcome(f *testing.F) {
	for _, s := range []string{
		`{"status":"Success"}`,
		`{"status":"Failure","message":"command terminated with non-zero exit code","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"7"}]}}`,
		`{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"99999999999999999999"}]}}`,
		`{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"-1"}]}}`,
		"command terminated with non-zero exit code: exit code 3",
		"not json",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, version := range []int{1, 4} {
			err := (&base64Executor{version: version}).outcome(text)
			if err == nil && len(text) > 0 {
				var st struct {
					Status string `json:"status"`
				}
				if version < 4 || json.Unmarshal(text, &st) != nil || st.Status != "Success" {
					t.Fatalf("outcome(v%d, %q) = nil: want an error for anything but a v4 Success", version, text)
				}
			}
			var code exec.CodeExitError
			if errors.As(err, &code) && (code.Code < 0 || code.Code > 255) {
				t.Fatalf("outcome(v%d, %q) = exit code %d, not a process status", version, text, code.Code)
			}
			if err != nil && version < 4 && len(text) > 0 && err.Error() == "" {
				t.Fatalf("outcome(v%d, %q) lost the text", version, text)
			}
		}
	})
}
