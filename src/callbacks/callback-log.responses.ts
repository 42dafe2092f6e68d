import { ApiProperty } from '@nestjs/swagger';

class CallbackAttempt {
  @ApiProperty({ example: 1 }) attempt: number;
  @ApiProperty({ format: 'date-time' }) attempted_at: string;
  @ApiProperty({ type: Number, nullable: true, example: 200, description: 'null when no HTTP answer came' }) http_status: number | null;
  @ApiProperty({ example: 84 }) latency_ms: number;
  @ApiProperty({ type: String, nullable: true, example: null }) error: string | null;
}

class CallbackDelivery {
  @ApiProperty({ format: 'uuid', description: 'the event id, the same on every attempt' }) event_id: string;
  @ApiProperty({ example: 'successful_payment' }) event: string;
  @ApiProperty({ example: 'https://merchant.example.com/callbacks/payments' }) url: string;
  @ApiProperty({ enum: ['PENDING', 'DELIVERED', 'FAILED'], example: 'DELIVERED' }) status: string;
  @ApiProperty({ example: 1 }) attempts: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) next_attempt_at: string | null;
  @ApiProperty({ type: Object, nullable: true, description: "the receiver's acknowledgement body, when it sent one" })
  acknowledgement: unknown;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completed_at: string | null;
  @ApiProperty({ type: [CallbackAttempt] }) attempt_log: CallbackAttempt[];
}

/** The delivery log of the callbacks about one reference. */
export class CallbackLog {
  @ApiProperty({ example: 'ORDER-42' }) reference: string;
  @ApiProperty({ type: [CallbackDelivery] }) deliveries: CallbackDelivery[];
}
