package streamserver

import "net/http"

type ownHandler struct {
	srv     *server
	profile Profile
}

func newOwnHandler(s *server, p Profile) *ownHandler { return &ownHandler{srv: s, profile: p} }

func (h *ownHandler) serve(w http.ResponseWriter, r *http.Request, sess *session) {
	http.Error(w, "profile "+string(h.profile)+" not built yet", http.StatusNotImplemented)
}
