package query

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredentials(t *testing.T) {
	for _, tt := range []struct {
		name  string
		c     Credentials
		stdin string
		want  string // the AuthConfig's text; "" for nil
		err   string
	}{
		{name: "anonymous"},
		{name: "creds", c: Credentials{Creds: "bob:a:b"}, want: `username:"bob" password:"a:b"`},
		{name: "creds without password", c: Credentials{Creds: "bob"}, want: `username:"bob"`},
		{name: "creds without user", c: Credentials{Creds: ":pw"}, err: "--creds: the username"},
		{name: "auth", c: Credentials{Auth: "Ym9iOng="}, want: `auth:"Ym9iOng="`},
		{name: "username", c: Credentials{Username: "robot"}, stdin: "s3cret\r\nnext\n", want: `username:"robot" password:"s3cret"`},
		{name: "username, no newline", c: Credentials{Username: "robot"}, stdin: "s3cret", want: `username:"robot" password:"s3cret"`},
		{name: "creds and auth", c: Credentials{Creds: "a", Auth: "b"}, err: "cannot both be given"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var prompt bytes.Buffer
			got, err := tt.c.AuthConfig(context.Background(), strings.NewReader(tt.stdin), &prompt)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("want an error with %q; got %v, %v", tt.err, got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if text := strings.Join(strings.Fields(got.String()), " "); (got == nil && tt.want != "") || (got != nil && text != tt.want) {
				t.Errorf("got %v, want %s", got, tt.want)
			}
			if wantPrompt := tt.c.Username != ""; (prompt.String() == "Password: ") != wantPrompt {
				t.Errorf("prompt %q", prompt.String())
			}
		})
	}
	if _, err := (Credentials{Creds: "a", Auth: "b"}).AuthConfig(context.Background(), nil, nil); !errors.Is(err, ErrCredsAndAuth) {
		t.Errorf("want ErrCredsAndAuth; got %v", err)
	}
	if got, err := (Credentials{Username: "u"}).AuthConfig(context.Background(), nil, nil); err != nil || got.GetUsername() != "u" || got.GetPassword() != "" {
		t.Errorf("username without stdin: %v, %v", got, err)
	}
}

func TestLoadPodConfigNamesTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(path, []byte("metadata:\n  name: p\n  attempt: many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPodConfig(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), path+":3") {
		t.Errorf("want an error naming %s:3; got %v", path, err)
	}
	if err := os.WriteFile(path, []byte("metadata: {name: p, namespace: default}\nlabels: {a: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadPodConfig(context.Background(), path)
	if err != nil || cfg.GetMetadata().GetName() != "p" || cfg.GetLabels()["a"] != "b" {
		t.Errorf("got %v, %v", cfg, err)
	}
}
