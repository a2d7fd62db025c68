/* qmaster.h: the queue master's shared declarations, sectioned by the file that defines them. */
#ifndef NOWQ_QMASTER_H
#define NOWQ_QMASTER_H
#endif
