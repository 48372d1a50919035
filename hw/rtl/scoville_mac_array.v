// scoville_mac_array: one weight-stationary systolic MAC array of the tensor core, in RTL.
//
// It computes C = A x B for one weight tile at a time: B is a ROWS x (COLS*LANES) tile of signed
// 8-bit weights, A streams through as rows of ROWS signed 8-bit activations, and every A row
// leaves as one row of COLS*LANES signed 32-bit sums (two's-complement wrap-around). A cell
// (k, c) holds LANES weights and does LANES multiply-accumulates per cycle; the transactor uses
// as many lanes as the transaction's precision has MACs per cell per cycle and loads zeros into
// the rest. Sums over more than ROWS reduction elements are added up outside the array.
//
// Dataflow. Activations enter at the left, row k of the array delayed k cycles (input skew), and
// move one cell right per cycle; partial sums move one cell down per cycle; the bottom row's
// sums are re-aligned (output deskew, column c delayed COLS-1-c cycles) and an A row's results
// leave together ROWS+COLS-1 cycles after it entered, into an output FIFO. Every activation
// carries a valid bit, its weight bank and its tile's last-row flag with it, so a cell always
// multiplies with the weights of the tile its activation belongs to.
//
// Double-buffered weights. Two banks: while one tile streams from one bank, the next tile's
// weights load into the other, one array row per beat. Row k of a bank may be overwritten only
// after the last activation of the bank's previous tile has passed row k (its last cell sees it
// COLS-1+k cycles after it entered). So a bank is ready for tile t+2 about M+ROWS+COLS-2 cycles
// after tile t started streaming: for M between a few rows and ROWS+COLS this, not the stream
// (M) or the load (ROWS), sets the pace.
//
// FAULT = 1 is a deliberate bug for the lock-step tests: the cells multiply with the bank that is
// streaming now instead of the bank their activation's tile uses, so the rows of a tile still in
// the array when the next tile starts (or when a tile ends) use the wrong weights.
//
// Handshakes: valid/ready on all three ports; a transfer happens at a rising clock edge where
// both are high. The ready outputs depend on registered state only (never on a valid input), so
// a driver may sample them before it decides to drive valid. Activations are accepted only while
// the output FIFO has room for every row in flight (credits), so the array itself never stalls.
//
// Ports (little-endian packing, element i at bits [W*i +: W]):
//   w_data  COLS*LANES x 8 bit   one array row k of the tile, element c*LANES + l; rows 0..ROWS-1
//                                in order, ROWS beats per tile
//   a_data  ROWS x 8 bit         one A row, element k multiplies array row k; a_last marks the
//                                tile's last A row (the next A row belongs to the next tile)
//   c_data  COLS*LANES x 32 bit  one result row, element c*LANES + l; c_last marks a tile's last
`default_nettype none
/* verilator lint_off DECLFILENAME */

module scoville_mac_array #(
    parameter int ROWS  = 8,
    parameter int COLS  = 8,
    parameter int LANES = 4,
    parameter int FAULT = 0
) (
    input  wire                      clk,
    input  wire                      rst_n,
    // weight tile rows
    input  wire                      w_valid,
    output wire                      w_ready,
    input  wire [COLS*LANES*8-1:0]   w_data,
    // activation rows
    input  wire                      a_valid,
    output wire                      a_ready,
    input  wire [ROWS*8-1:0]         a_data,
    input  wire                      a_last,
    // result rows
    output wire                      c_valid,
    input  wire                      c_ready,
    output wire [COLS*LANES*32-1:0]  c_data,
    output wire                      c_last
);
  localparam int NW = COLS * LANES;     // weights (and results) per array row
  localparam int DEPTH = ROWS + COLS + 4;  // output FIFO rows: room for a full pipeline
  localparam int PW = $clog2(DEPTH + 1);
  localparam int RW = $clog2(ROWS + 1);

  reg [47:0] cycle;  // rising edges since reset

  // ---- weight banks and their control -------------------------------------------------------
  reg        full[2];         // bank holds a whole tile not yet streamed
  reg        used[2];         // bank streamed a tile since reset
  reg [47:0] lastInject[2];   // cycle its last tile's last A row entered
  reg        loadBank;
  reg        streamBank;
  reg [RW-1:0] loadRow;  // next array row of the load bank

  wire rowFree = !used[loadBank] ||
                 (cycle >= lastInject[loadBank] + 48'(loadRow) + 48'(COLS) - 48'd1);
  assign w_ready = !full[loadBank] && rowFree;
  wire loadBeat = w_valid && w_ready;

  // ---- credits and injection ----------------------------------------------------------------
  reg [PW-1:0] inflight;  // A rows inside the array
  reg [PW-1:0] count;     // rows in the output FIFO
  assign a_ready = full[streamBank] && (32'(count) + 32'(inflight) < DEPTH);
  wire inject = a_valid && a_ready;

  // ---- input skew: row k sees an A row k cycles after it was injected ------------------------
  reg signed [7:0] skewA[ROWS][ROWS];
  reg              skewV[ROWS][ROWS];
  reg              skewS[ROWS][ROWS];
  reg              skewL[ROWS][ROWS];

  // ---- the cells, and the wires between them: east-going activation and tags, south-going sums
  wire signed [7:0]       eastA[ROWS][COLS+1];
  wire                    eastV[ROWS][COLS+1];
  wire                    eastS[ROWS][COLS+1];
  wire                    eastL[ROWS][COLS+1];
  wire [31:0]             southP[ROWS+1][COLS][LANES];

  genvar gk, gc;
  generate
    for (gk = 0; gk < ROWS; gk++) begin : row
      if (gk == 0) begin : edge0
        assign eastA[0][0] = $signed(a_data[7:0]);
        assign eastV[0][0] = inject;
        assign eastS[0][0] = streamBank;
        assign eastL[0][0] = a_last;
      end else begin : edgeK
        assign eastA[gk][0] = skewA[gk][gk-1];
        assign eastV[gk][0] = skewV[gk][gk-1];
        assign eastS[gk][0] = skewS[gk][gk-1];
        assign eastL[gk][0] = skewL[gk][gk-1];
      end
      for (gc = 0; gc < COLS; gc++) begin : col
        if (gk == 0) begin : top
          for (genvar gl = 0; gl < LANES; gl++) begin : lane
            assign southP[0][gc][gl] = '0;
          end
        end
        scoville_mac_cell #(.LANES(LANES), .FAULT(FAULT)) pe (
            .clk(clk),
            .rst_n(rst_n),
            .stream_bank(streamBank),
            .load(loadBeat && 32'(loadRow) == gk),
            .load_bank(loadBank),
            .load_data(w_data[8*LANES*gc +: 8*LANES]),
            .a_in(eastA[gk][gc]),
            .v_in(eastV[gk][gc]),
            .s_in(eastS[gk][gc]),
            .l_in(eastL[gk][gc]),
            .p_in(southP[gk][gc]),
            .a_out(eastA[gk][gc+1]),
            .v_out(eastV[gk][gc+1]),
            .s_out(eastS[gk][gc+1]),
            .l_out(eastL[gk][gc+1]),
            .p_out(southP[gk+1][gc]));
      end
    end
  endgenerate

  // ---- output deskew and FIFO ---------------------------------------------------------------
  reg [31:0]        deskew[COLS][COLS][LANES];
  reg [NW*32-1:0]   fifoData[DEPTH];
  reg               fifoLast[DEPTH];
  reg [PW-1:0]      head;
  reg [PW-1:0]      tail;

  wire outValid = eastV[ROWS-1][COLS];
  wire outLast = eastL[ROWS-1][COLS];
  wire pop = c_valid && c_ready;
  assign c_valid = count != 0;
  assign c_data = fifoData[head];
  assign c_last = fifoLast[head];

  // The row leaving the array this cycle, re-aligned.
  reg [NW*32-1:0] outRow;
  always @(*) begin
    for (int c = 0; c < COLS; c++) begin
      for (int l = 0; l < LANES; l++) begin
        if (c == COLS - 1) outRow[32*(c*LANES+l) +: 32] = southP[ROWS][c][l];
        else outRow[32*(c*LANES+l) +: 32] = deskew[c][c < COLS - 1 ? COLS - 2 - c : 0][l];
      end
    end
  end

  always @(posedge clk) begin
    if (!rst_n) begin
      cycle <= 0;
      full[0] <= 0;
      full[1] <= 0;
      used[0] <= 0;
      used[1] <= 0;
      lastInject[0] <= 0;
      lastInject[1] <= 0;
      loadBank <= 0;
      streamBank <= 0;
      loadRow <= 0;
      inflight <= 0;
      count <= 0;
      head <= 0;
      tail <= 0;
      for (int k = 0; k < ROWS; k++) begin
        for (int d = 0; d < ROWS; d++) skewV[k][d] <= 0;
      end
    end else begin
      cycle <= cycle + 1;

      // weights: one array row per beat into the load bank (the cells of row loadRow take it)
      if (loadBeat) begin
        if (32'(loadRow) == ROWS - 1) begin
          full[loadBank] <= 1;
          loadBank <= !loadBank;
          loadRow <= 0;
        end else begin
          loadRow <= loadRow + 1;
        end
      end

      // a tile's last A row frees its bank, row by row as it passes (see rowFree)
      if (inject && a_last) begin
        full[streamBank] <= 0;
        used[streamBank] <= 1;
        lastInject[streamBank] <= cycle;
        streamBank <= !streamBank;
      end

      // input skew (row 0 has none)
      for (int k = 1; k < ROWS; k++) begin
        skewA[k][0] <= $signed(a_data[8*k +: 8]);
        skewV[k][0] <= inject;
        skewS[k][0] <= streamBank;
        skewL[k][0] <= a_last;
        for (int d = 1; d < k; d++) begin
          skewA[k][d] <= skewA[k][d-1];
          skewV[k][d] <= skewV[k][d-1];
          skewS[k][d] <= skewS[k][d-1];
          skewL[k][d] <= skewL[k][d-1];
        end
      end

      // output deskew: column c waits COLS-1-c cycles for the columns right of it
      for (int c = 0; c < COLS - 1; c++) begin
        for (int l = 0; l < LANES; l++) begin
          deskew[c][0][l] <= southP[ROWS][c][l];
          for (int d = 1; d < COLS - 1 - c; d++) deskew[c][d][l] <= deskew[c][d-1][l];
        end
      end

      // output FIFO
      if (outValid) begin
        fifoData[tail] <= outRow;
        fifoLast[tail] <= outLast;
        tail <= 32'(tail) == DEPTH - 1 ? 0 : tail + 1;
      end
      if (pop) head <= 32'(head) == DEPTH - 1 ? 0 : head + 1;
      count <= count + PW'(outValid) - PW'(pop);
      inflight <= inflight + PW'(inject) - PW'(outValid);
    end
  end
endmodule

// One cell: LANES signed 8 x 8 bit multiply-accumulates per cycle on the activation passing
// through, with the weights of the bank that activation's tile uses.
module scoville_mac_cell #(
    parameter int LANES = 4,
    parameter int FAULT = 0
) (
    input  wire                    clk,
    input  wire                    rst_n,
    input  wire                    stream_bank,  // the array's streaming bank (used only by FAULT = 1)
    input  wire                    load,       // write load_data into bank load_bank
    input  wire                    load_bank,
    input  wire [LANES*8-1:0]      load_data,
    input  wire signed [7:0]       a_in,
    input  wire                    v_in,       // a_in is an A row's element, not a bubble
    input  wire                    s_in,       // weight bank of a_in's tile
    input  wire                    l_in,       // a_in belongs to its tile's last A row
    input  wire [31:0]             p_in[LANES],  // partial sums from the cell above
    output reg signed [7:0]        a_out,
    output reg                     v_out,
    output reg                     s_out,
    output reg                     l_out,
    output reg [31:0]              p_out[LANES]
);
  reg signed [7:0] weight[2][LANES];

  always @(posedge clk) begin
    if (!rst_n) begin
      v_out <= 0;
    end else begin
      a_out <= a_in;
      v_out <= v_in;
      s_out <= s_in;
      l_out <= l_in;
      if (load) begin
        for (int l = 0; l < LANES; l++) weight[load_bank][l] <= $signed(load_data[8*l +: 8]);
      end
    end
  end

  // The sums leave one cycle later, like the activation (a bubble's sums are don't-care).
  wire bank = (FAULT != 0) ? stream_bank : s_in;
  always @(posedge clk) begin
    for (int l = 0; l < LANES; l++) begin
      p_out[l] <= p_in[l] + 32'($signed(a_in) * $signed(weight[bank][l]));
    end
  end
endmodule

`default_nettype wire
