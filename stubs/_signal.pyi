# The C module under `signal` (typeshed has no stub for it): the names orca.sample's earliest code uses, typed as
# `signal` types them.
from signal import NSIG as NSIG
from signal import SIG_BLOCK as SIG_BLOCK
from signal import SIG_IGN as SIG_IGN
from signal import SIG_SETMASK as SIG_SETMASK
from signal import SIGHUP as SIGHUP
from signal import SIGINT as SIGINT
from signal import SIGTERM as SIGTERM
from signal import getsignal as getsignal
from signal import pthread_sigmask as pthread_sigmask
from signal import signal as signal
from signal import valid_signals as valid_signals
