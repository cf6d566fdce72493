package prompt

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
