package main

// groupLifecycle holds crictl's verbs that make, change and remove pods
// and containers, and logs.
const groupLifecycle = "lifecycle"
