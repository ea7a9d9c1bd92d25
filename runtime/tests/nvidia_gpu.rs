//! The `nvidia` device on a real GPU, with hand-written kernels that follow jit-ptx's kernel
//! ABI: data clauses, launches, results, reductions, device errors, queues.
//!
//! These need a GPU and its driver: they are `#[ignore]`d in CI (no GPU there) and run on the
//! GPU machine with `cargo test -p acc-runtime --test nvidia_gpu -- --ignored` (or the test
//! binary with `--ignored`); docs/GPU-RESULTS.md records the runs. Without a GPU each test
//! fails with a message, never passes silently.

use acc_abi::kernel::KernelLaunch;
use acc_abi::{DeviceSizes, LaunchSizes};
use acc_runtime::abi::{ArrayHeader, ELEM_F32, ELEM_F64, STATUS_OK};
use acc_runtime::array::{elements, elements_mut, new_array, release};
use acc_runtime::device::ops::{DataOpArg, DataPhase, ACTION_COPY, ACTION_COPYIN};
use acc_runtime::device::{gpu_count, DeviceKind, DeviceOptions, Launch, ASYNC_SYNC};
use acc_runtime::kernels::{DevicePrints, GpuKernel};
use acc_runtime::launch::{
    ComputeKind, ParamDesc, ParamPass, ReductionDesc, ReductionOp, RegionDesc, RegionKey,
};
use acc_runtime::{Context, HostState, Outcome, RunErrorKind, SharedBuffer};

const PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64

// y = a * x + y over the arrays' length (f32), grid-stride.
.visible .entry acc_region_0(.param .u64 p0, .param .u64 p1, .param .u64 p2,
    .param .u64 results, .param .u64 partials, .param .u64 error)
{
    .reg .pred %p<4>;
    .reg .b32 %r<10>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [p0];
    ld.param.u64 %rd2, [p1];
    ld.param.u64 %rd3, [p2];
    cvt.u32.u64 %r1, %rd3;
    mov.b32 %f1, %r1;
    ld.global.u64 %rd4, [%rd1];
    ld.global.u64 %rd5, [%rd2];
    ld.global.u64 %rd6, [%rd1+8];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mov.u32 %r5, %nctaid.x;
    mad.lo.u32 %r6, %r2, %r3, %r4;
    cvt.u64.u32 %rd7, %r6;
    mul.lo.u32 %r7, %r3, %r5;
    cvt.u64.u32 %rd8, %r7;
LOOP:
    setp.ge.s64 %p1, %rd7, %rd6;
    @%p1 bra DONE;
    shl.b64 %rd9, %rd7, 2;
    add.s64 %rd10, %rd4, %rd9;
    add.s64 %rd11, %rd5, %rd9;
    ld.global.f32 %f2, [%rd10];
    ld.global.f32 %f3, [%rd11];
    mul.rn.f32 %f4, %f1, %f2;
    add.rn.f32 %f5, %f4, %f3;
    st.global.f32 [%rd11], %f5;
    add.s64 %rd7, %rd7, %rd8;
    bra LOOP;
DONE:
    ret;
}

// A bounds error at site 7: index len of the array of p0 (thread 0 of block 0).
.visible .entry acc_region_1(.param .u64 p0, .param .u64 results, .param .u64 partials,
    .param .u64 error)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    or.b32 %r3, %r1, %r2;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra END;
    ld.param.u64 %rd1, [p0];
    ld.global.u64 %rd2, [%rd1+8];
    ld.param.u64 %rd3, [error];
    mov.u32 %r5, 1;
    atom.global.cas.b32 %r4, [%rd3], 0, %r5;
    setp.ne.u32 %p2, %r4, 0;
    @%p2 bra END;
    mov.u32 %r6, 7;
    st.global.u32 [%rd3+4], %r6;
    st.global.u32 [%rd3+8], %r5;
    mov.u32 %r7, 0;
    st.global.u32 [%rd3+12], %r7;
    st.global.u64 [%rd3+16], %rd2;
    st.global.u64 [%rd3+24], %rd2;
    mov.u64 %rd4, -1;
    st.global.u64 [%rd3+32], %rd4;
    st.global.u64 [%rd3+40], %rd4;
    st.global.u64 [%rd3+48], %rd4;
    st.global.u64 [%rd3+56], %rd4;
    st.global.u64 [%rd3+64], %rd4;
END:
    ret;
}

// s += sum of x (f64): thread 0 of each block sums the elements b, b + grid, ... into the
// block's partial; parameter 1 is the reduction's.
.visible .entry acc_region_2(.param .u64 p0, .param .u64 p1,
    .param .u64 results, .param .u64 partials, .param .u64 error)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .f64 %d<4>;
    .reg .b64 %rd<16>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra END;
    ld.param.u64 %rd1, [p0];
    ld.global.u64 %rd2, [%rd1];
    ld.global.u64 %rd3, [%rd1+8];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %nctaid.x;
    cvt.u64.u32 %rd4, %r2;
    cvt.u64.u32 %rd5, %r3;
    mov.f64 %d1, 0d0000000000000000;
LOOP:
    setp.ge.s64 %p2, %rd4, %rd3;
    @%p2 bra STORE;
    shl.b64 %rd6, %rd4, 3;
    add.s64 %rd7, %rd2, %rd6;
    ld.global.f64 %d2, [%rd7];
    add.rn.f64 %d1, %d1, %d2;
    add.s64 %rd4, %rd4, %rd5;
    bra LOOP;
STORE:
    ld.param.u64 %rd8, [partials];
    cvt.u64.u32 %rd9, %r2;
    shl.b64 %rd10, %rd9, 3;
    add.s64 %rd11, %rd8, %rd10;
    st.global.f64 [%rd11], %d1;
END:
    ret;
}

// Thread 0 of each block appends a print record `id 0 | 2 << 32`: its block number (i64) and
// 0.1 (f64), to the output buffer (`out`: header {cursor, lost, capacity, end}, records from
// byte 32).
.visible .entry acc_region_3(.param .u64 results, .param .u64 partials, .param .u64 error,
    .param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<12>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra END;
    ld.param.u64 %rd1, [out];
    atom.global.add.u64 %rd2, [%rd1], 24;
    ld.global.u64 %rd3, [%rd1+16];
    add.u64 %rd4, %rd2, 24;
    setp.gt.u64 %p2, %rd4, %rd3;
    @%p2 bra LOST;
    add.u64 %rd5, %rd1, %rd2;
    st.global.u64 [%rd5+32], 8589934592;
    mov.u32 %r2, %ctaid.x;
    cvt.u64.u32 %rd6, %r2;
    st.global.u64 [%rd5+40], %rd6;
    mov.b64 %rd7, 0d3FB999999999999A;
    st.global.u64 [%rd5+48], %rd7;
    bra END;
LOST:
    red.global.add.u64 [%rd1+8], 1;
    red.global.min.u64 [%rd1+24], %rd2;
END:
    ret;
}
"#;

fn gpu_context() -> (Context, SharedBuffer) {
    assert!(
        gpu_count() > 0,
        "no NVIDIA GPU or driver here: run these tests on the GPU machine"
    );
    let out = SharedBuffer::new();
    let mut c = Context::new(HostState::new(Box::new(out.clone())));
    c.configure_devices(DeviceOptions::new().device(DeviceKind::Nvidia, 0));
    (c, out)
}

/// Region `n` of a compile, with `acc_region_{n}` of `PTX` as its kernel in `c`'s table.
fn region(
    c: &mut Context,
    n: u32,
    params: Vec<ParamDesc>,
    reductions: Vec<ReductionDesc>,
) -> RegionDesc {
    let key = RegionKey { unit: 1, region: n };
    let desc = RegionDesc::new(
        key,
        ComputeKind::Parallel,
        "parallel loop",
        params,
        reductions,
    );
    let kernel = GpuKernel {
        ptx: PTX.into(),
        name: format!("acc_region_{n}"),
        strings: Vec::new().into(),
        globals: Vec::new(),
        prints: None,
        launch: KernelLaunch::default(),
    };
    c.gpu_kernels().insert(key, kernel);
    desc
}

/// `acc_region_0`: `y = a * x + y` over two f32 arrays and an f32 scalar.
fn saxpy_region(c: &mut Context) -> RegionDesc {
    region(
        c,
        0,
        vec![
            param(ParamPass::Array, ELEM_F32),
            param(ParamPass::Array, ELEM_F32),
            param(ParamPass::Value, ELEM_F32),
        ],
        vec![],
    )
}

fn param(pass: ParamPass, elem: u32) -> ParamDesc {
    ParamDesc::new(pass, elem)
}

fn op(a: *mut ArrayHeader, action: u32) -> DataOpArg {
    DataOpArg::whole(a, action, 1)
}

const NO_SIZES: LaunchSizes = LaunchSizes {
    nvidia: DeviceSizes::ABSENT,
    host: DeviceSizes::ABSENT,
    multicore: DeviceSizes::ABSENT,
};

fn launch<'a>(
    desc: &'a RegionDesc,
    args: &'a mut [u64],
    ops: &'a [DataOpArg],
    queue: i64,
) -> Launch<'a> {
    Launch {
        desc,
        args,
        ops,
        sizes: &NO_SIZES,
        queue,
        waits: None,
        site: 3,
        late: false,
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run on the GPU machine with --ignored"]
fn saxpy_with_copyin_and_copy() {
    let (mut c, _) = gpu_context();
    let n = 1 << 20;
    let x = new_array(ELEM_F32, &[n]).unwrap();
    let y = new_array(ELEM_F32, &[n]).unwrap();
    unsafe {
        elements_mut::<f32>(x)
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = i as f32);
        elements_mut::<f32>(y).fill(1.0);
        let desc = saxpy_region(&mut c);
        let mut args = [x as u64, y as u64, u64::from(2.0f32.to_bits())];
        let ops = [op(x, ACTION_COPYIN), op(y, ACTION_COPY)];
        let ctx = c.ctx_ptr();
        let devices = c.devices();
        devices.launch(ctx, launch(&desc, &mut args, &ops, ASYNC_SYNC), true);
        assert_eq!((*ctx).status, STATUS_OK, "{:?}", c.finish());
        let ys = elements::<f32>(y);
        assert_eq!(ys[0], 1.0);
        assert_eq!(ys[10], 21.0);
        assert_eq!(ys[(n - 1) as usize], 2.0 * (n - 1) as f32 + 1.0);
        assert_eq!(c.devices().present_arrays(), 0);
        release(x);
        release(y);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run on the GPU machine with --ignored"]
fn data_directives_keep_data_on_the_gpu_until_update() {
    let (mut c, _) = gpu_context();
    let n = 1000;
    let x = new_array(ELEM_F32, &[n]).unwrap();
    let y = new_array(ELEM_F32, &[n]).unwrap();
    unsafe {
        elements_mut::<f32>(x).fill(1.0);
        let ctx = c.ctx_ptr();
        let enter = [op(x, ACTION_COPYIN), op(y, ACTION_COPYIN)];
        let desc = saxpy_region(&mut c);
        let d = c.devices();
        d.data(
            ctx,
            DataPhase::Enter,
            &enter,
            acc_abi::DataModifiers::NONE,
            ASYNC_SYNC,
            None,
            2,
        );
        assert!(d.is_present(ctx, &op(y, 0)));
        let present = [op(x, 5), op(y, 5)];
        for _ in 0..3 {
            let mut args = [x as u64, y as u64, u64::from(1.0f32.to_bits())];
            // Queue 1, asynchronously.
            d.launch(ctx, launch(&desc, &mut args, &present, 1), true);
        }
        d.wait(ctx, &[1], false, ASYNC_SYNC, 4);
        assert_eq!(
            elements::<f32>(y)[5],
            0.0,
            "the host copy changed without an update"
        );
        let update = [op(y, 10)];
        d.data(
            ctx,
            DataPhase::Update,
            &update,
            acc_abi::DataModifiers::NONE,
            ASYNC_SYNC,
            None,
            5,
        );
        assert_eq!(elements::<f32>(y)[5], 3.0);
        let exit = [op(x, 6), op(y, 6)];
        d.data(
            ctx,
            DataPhase::Exit,
            &exit,
            acc_abi::DataModifiers::NONE,
            ASYNC_SYNC,
            None,
            6,
        );
        assert!(!d.is_present(ctx, &op(y, 0)));
        assert_eq!((*ctx).status, STATUS_OK);
        release(x);
        release(y);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run on the GPU machine with --ignored"]
fn a_bounds_error_in_a_kernel_is_reported_and_the_device_stays_usable() {
    let (mut c, _) = gpu_context();
    let a = new_array(ELEM_F32, &[10]).unwrap();
    unsafe {
        let desc = region(&mut c, 1, vec![param(ParamPass::Array, ELEM_F32)], vec![]);
        let ctx = c.ctx_ptr();
        let mut args = [a as u64];
        let ops = [op(a, ACTION_COPY)];
        c.devices()
            .launch(ctx, launch(&desc, &mut args, &ops, ASYNC_SYNC), true);
        match c.finish() {
            Outcome::Error(e) => {
                assert_eq!(e.site, Some(7));
                assert_eq!(
                    e.kind,
                    RunErrorKind::Bounds {
                        index: 10,
                        dim: 0,
                        shape: vec![10]
                    }
                );
            }
            other => panic!("expected a bounds error, got {other:?}"),
        }
        // Usable afterwards: a saxpy runs.
        let y = new_array(ELEM_F32, &[10]).unwrap();
        let saxpy = saxpy_region(&mut c);
        elements_mut::<f32>(a).fill(2.0);
        let mut args = [a as u64, y as u64, u64::from(3.0f32.to_bits())];
        let ops = [op(a, ACTION_COPYIN), op(y, ACTION_COPY)];
        c.devices()
            .launch(ctx, launch(&saxpy, &mut args, &ops, ASYNC_SYNC), true);
        assert_eq!(c.finish(), Outcome::Finished);
        assert_eq!(elements::<f32>(y)[9], 6.0);
        release(a);
        release(y);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run on the GPU machine with --ignored"]
fn reduction_partials_are_combined_in_block_order() {
    let (mut c, _) = gpu_context();
    let n = 100_000;
    let x = new_array(ELEM_F64, &[n]).unwrap();
    unsafe {
        elements_mut::<f64>(x)
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = i as f64);
        let desc = region(
            &mut c,
            2,
            vec![
                param(ParamPass::Array, ELEM_F64),
                param(ParamPass::InOut, ELEM_F64),
            ],
            vec![ReductionDesc {
                op: ReductionOp::Add,
                elem: ELEM_F64,
                param: 1,
                identity: 0.0f64.to_bits(),
            }],
        );
        let ctx = c.ctx_ptr();
        let mut results = Vec::new();
        for _ in 0..3 {
            let mut args = [x as u64, 10.0f64.to_bits()];
            let ops = [op(x, ACTION_COPYIN)];
            c.devices()
                .launch(ctx, launch(&desc, &mut args, &ops, ASYNC_SYNC), true);
            results.push(f64::from_bits(args[1]));
        }
        assert_eq!(c.finish(), Outcome::Finished);
        let exact = 10.0 + (n * (n - 1) / 2) as f64;
        assert_eq!(results[0], exact);
        assert!(results.windows(2).all(|w| w[0].to_bits() == w[1].to_bits()));
        release(x);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run on the GPU machine with --ignored"]
fn gpu_memory_properties() {
    let (mut c, _) = gpu_context();
    let (total, free) = c.devices().gpu_memory(0).expect("GPU 0");
    assert!(total > 1 << 30, "{total}");
    assert!(free > 0 && free <= total, "{free} of {total}");
    assert_eq!(c.devices().gpu_memory(gpu_count()), None);
}

/// One context's life on GPU 0: the saxpy kernel's module loaded, four async queues' streams
/// made, a launch on each, the wait, the context dropped.
fn a_context_that_uses_four_queues() {
    let (mut c, _) = gpu_context();
    let n = 1 << 12;
    let x = new_array(ELEM_F32, &[n]).unwrap();
    let y = new_array(ELEM_F32, &[n]).unwrap();
    unsafe {
        let desc = saxpy_region(&mut c);
        let ctx = c.ctx_ptr();
        let d = c.devices();
        for q in 1..=4 {
            let mut args = [x as u64, y as u64, u64::from(1.0f32.to_bits())];
            let ops = [op(x, ACTION_COPYIN), op(y, ACTION_COPY)];
            d.launch(ctx, launch(&desc, &mut args, &ops, q), true);
        }
        d.wait(ctx, &[1, 2, 3, 4], false, ASYNC_SYNC, 4);
        assert_eq!((*ctx).status, STATUS_OK, "{:?}", c.finish());
        release(x);
        release(y);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run on the GPU machine with --ignored"]
fn dropped_contexts_give_their_modules_streams_and_events_back() {
    // An embedding program makes and drops engines for as long as it runs. Each context loads
    // its own module and makes its own streams and events; if it kept them, the GPU's free
    // memory would fall by the module's code and the streams' state with every context.
    let (mut probe, _) = gpu_context();
    let free = |probe: &mut Context| probe.devices().gpu_memory(0).expect("GPU 0").1;
    for _ in 0..20 {
        a_context_that_uses_four_queues();
    }
    let before = free(&mut probe);
    let rounds = 300;
    for _ in 0..rounds {
        a_context_that_uses_four_queues();
    }
    let after = free(&mut probe);
    let lost = before.saturating_sub(after);
    eprintln!("free GPU memory {before} -> {after} after {rounds} contexts: {lost} bytes lost");
    assert!(
        lost < 16 << 20,
        "{lost} bytes of GPU memory lost over {rounds} contexts ({} each)",
        lost / rounds
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU: run on the GPU machine with --ignored"]
fn large_transfers_and_sections_round_trip() {
    let (mut c, _) = gpu_context();
    // 5M f64 (40 MB): staged in 32 MiB chunks, the last one partial; the section (24 MB) too.
    let n = 5_000_000;
    let x = new_array(ELEM_F64, &[n]).unwrap();
    unsafe {
        let values: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        elements_mut::<f64>(x).copy_from_slice(&values);
        let ctx = c.ctx_ptr();
        let d = c.devices();
        let enter = [op(x, ACTION_COPYIN)];
        d.data(
            ctx,
            DataPhase::Enter,
            &enter,
            acc_abi::DataModifiers::NONE,
            ASYNC_SYNC,
            None,
            2,
        );
        elements_mut::<f64>(x).fill(-1.0);
        // A section that starts and ends inside chunks: only it comes back.
        let mut section = op(x, 10);
        section.nranges = 1;
        section.ranges[0] = [1000, 3_000_000];
        d.data(
            ctx,
            DataPhase::Update,
            &[section],
            acc_abi::DataModifiers::NONE,
            ASYNC_SYNC,
            None,
            3,
        );
        let xs = elements::<f64>(x);
        assert_eq!(xs[999], -1.0);
        assert_eq!(&xs[1000..3_001_000], &values[1000..3_001_000]);
        assert_eq!(xs[3_001_000], -1.0);
        // The whole array, on an async queue, then waited for.
        d.data(
            ctx,
            DataPhase::Update,
            &[op(x, 10)],
            acc_abi::DataModifiers::NONE,
            2,
            None,
            4,
        );
        d.wait(ctx, &[2], false, ASYNC_SYNC, 5);
        assert_eq!(elements::<f64>(x), &values[..]);
        d.data(
            ctx,
            DataPhase::Exit,
            &[op(x, 6)],
            acc_abi::DataModifiers::NONE,
            ASYNC_SYNC,
            None,
            6,
        );
        assert_eq!((*ctx).status, STATUS_OK);
        release(x);
    }
}

/// Print 0 of `acc_region_3`: `print("block", i64, f64)`, formatted as the host would.
#[derive(Debug)]
struct BlockPrint;

impl DevicePrints for BlockPrint {
    fn text(&self, id: u32, slots: &[u64]) -> Option<String> {
        match (id, slots) {
            (0, &[b, x]) => Some(format!("block {} {}\n", b as i64, f64::from_bits(x))),
            _ => None,
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run on the GPU machine with --ignored"]
fn print_records_become_output_at_synchronization() {
    let (mut c, out) = gpu_context();
    let key = RegionKey { unit: 1, region: 3 };
    let desc = RegionDesc::new(key, ComputeKind::Parallel, "parallel", vec![], vec![]);
    let sizes = {
        let mut s = NO_SIZES;
        s.nvidia.num_gangs = 3;
        s
    };
    let kernel = GpuKernel {
        ptx: PTX.into(),
        name: "acc_region_3".into(),
        strings: Vec::new().into(),
        globals: Vec::new(),
        prints: Some(std::sync::Arc::new(BlockPrint)),
        launch: KernelLaunch::default(),
    };
    c.gpu_kernels().insert(key, kernel);
    unsafe {
        let ctx = c.ctx_ptr();
        let mut args: [u64; 0] = [];
        let mut l = launch(&desc, &mut args, &[], ASYNC_SYNC);
        l.sizes = &sizes;
        c.devices().launch(ctx, l, true);
        assert_eq!((*ctx).status, STATUS_OK, "{:?}", c.finish());
        let mut lines: Vec<String> = out.contents().lines().map(String::from).collect();
        lines.sort();
        assert_eq!(lines, ["block 0 0.1", "block 1 0.1", "block 2 0.1"]);
        // On an async queue, the output waits for the queue.
        let mut l = launch(&desc, &mut args, &[], 1);
        l.sizes = &sizes;
        c.devices().launch(ctx, l, true);
        c.devices().wait(ctx, &[1], false, ASYNC_SYNC, 4);
        assert_eq!((*ctx).status, STATUS_OK, "{:?}", c.finish());
        assert_eq!(out.contents().lines().count(), 6, "{}", out.contents());
    }
}
