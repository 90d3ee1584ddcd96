/* shm — layout of the shared memory between the runtime and the recorder (to be written). */
#ifndef SC_RUNTIME_SHM_H
#define SC_RUNTIME_SHM_H
#endif
