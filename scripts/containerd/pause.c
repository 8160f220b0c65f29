/* The pod sandbox's pause process for the crisp containerd harness: it holds
 * the pod's namespaces, waits in pause() and reaps any child re-parented to it
 * (it is PID 1 of the pod when the pod shares its PID namespace). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
	(void)sig;
	_exit(0);
}

static void reap(int sig) {
	int saved = errno;
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
	errno = saved;
}

int main(void) {
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = reap;
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	for (;;)
		pause();
	return 0;
}
