# Whose network namespace: the sandbox's belongs to the host's user
# namespace (mcp-exec makes it ahead, sandbox/netns_ahead.c), not to the
# sandbox's own, so not even root inside, with every capability of its
# user namespace, could configure it.  NS_GET_USERNS on /proc/self/ns/net
# must fail EPERM (the owner is outside the sandbox's namespaces); a
# sandbox that owned its namespace would get its own user namespace back.
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "NS_GET_USERNS EPERM" in r["stdout"]
# gvisor_expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# gvisor_expect: "owned by the sandbox's user namespace" not in r["stdout"]
# gvisor_contained: gVisor's network stack is the sentry's, with no host network namespace behind it
import errno, fcntl, os

NS_GET_USERNS = 0xb701		# _IO(0xb7, 0x1)

fd = os.open("/proc/self/ns/net", os.O_RDONLY)
try:
    u = fcntl.ioctl(fd, NS_GET_USERNS)
    own = os.stat("/proc/self/fd/%d" % u).st_ino == \
        os.stat("/proc/self/ns/user").st_ino
    print("NS_GET_USERNS returned an owner:",
          "owned by the sandbox's user namespace" if own else "another")
except OSError as e:
    print("NS_GET_USERNS", errno.errorcode.get(e.errno, e.errno))
print("probes done")
